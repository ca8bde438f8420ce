/**
 * The send limit: `POST /send` per client address, with express-rate-limit.
 *
 * - `SEND_BURST` sends per window of `SEND_BURST / SEND_RATE` seconds
 *   (`rateLimitWindow` in config.ts); `SEND_RATE=0` turns it off.
 * - Answers carry the standard `RateLimit` and `RateLimit-Policy` headers
 *   (IETF draft 8); past the limit, 429 `rate_limited` in the chat's JSON
 *   error format, with `Retry-After`.
 * - With Redis (`REDIS_URL`) the counts live in Redis (rate-limit-redis on the
 *   bus's own connection), so an address has one limit across every process
 *   and machine, not one per process. Without Redis, in memory.
 * - While Redis cannot be reached, each process counts in memory instead:
 *   the limit holds per process rather than failing every send or none.
 *
 * The address is `req.ip`, which honours `TRUST_PROXY`: behind a proxy it
 * must name the proxy, or every visitor shares the proxy's address.
 */
import type { Request, RequestHandler } from 'express';
import {
  type IncrementResponse,
  ipKeyGenerator,
  MemoryStore,
  type Options,
  rateLimit,
  type Store,
} from 'express-rate-limit';
import type { Redis } from 'ioredis';
import { RedisStore } from 'rate-limit-redis';
import { type Config, rateLimitWindow } from '../config.ts';
import { httpError } from '../errors.ts';
import type { Log } from '../log.ts';
import { createOutageState, type OutageState } from '../metrics/outage.ts';

/** A Redis that does not answer this fast is treated as down for this send. */
const REDIS_DEADLINE_MS = 500;

export interface SendLimit {
  readonly middleware: RequestHandler;
  /** `redis` or `memory`: where the counts are kept. */
  readonly shared: 'redis' | 'memory';
  close(): Promise<void>;
}

export function createSendLimit(
  config: Pick<Config, 'sendRatePerSec' | 'sendBurst' | 'redisPrefix'>,
  options: { redis?: Redis | undefined; log: Log },
): SendLimit | undefined {
  const window = rateLimitWindow(config);
  if (!window) return undefined;
  const store = options.redis
    ? new RedisOrMemoryStore(
        options.redis,
        `${config.redisPrefix}:send-limit:`,
        createOutageState({ name: 'redis (shared send limit)', log: options.log }),
      )
    : new MemoryStore();

  const middleware = rateLimit({
    windowMs: window.windowMs,
    limit: window.limit,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    store,
    // Its checks of its own configuration (each runs once) and its store
    // errors go to our log, as warnings without a stack: a client can set
    // off some of them (an X-Forwarded-For where no proxy is trusted).
    logger: {
      warn: (error, message) => options.log('warn', message ?? 'express-rate-limit', error),
      error: (error, message) => options.log('warn', message ?? 'express-rate-limit', error),
    },
    // A request on a pipe or Unix socket (IIS, a socket behind nginx) with no
    // X-Forwarded-For has no address: those share one bucket rather than
    // failing (express-rate-limit would hash `undefined`). An IPv6 address
    // counts by its /56, as the library advises (one host has many).
    keyGenerator: (req) => (req.ip === undefined ? 'no-address' : ipKeyGenerator(req.ip)),
    // The start-up warning covers TRUST_PROXY (config.ts, trustProxyWarning).
    validate: { trustProxy: false, ip: false },
    handler(req, _res, next) {
      next(httpError('rate_limited', undefined, { retryAfter: retryAfter(req, window.windowMs) }));
    },
  });
  return {
    middleware,
    shared: options.redis ? 'redis' : 'memory',
    async close() {
      await store.shutdown?.();
    },
  };
}

function retryAfter(req: Request, windowMs: number): number {
  const reset = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
  const ms = reset ? reset.getTime() - Date.now() : windowMs;
  return Math.max(1, Math.ceil(ms / 1000));
}

/**
 * Counts in Redis; while Redis fails or is slow, in this process's memory.
 * The publisher connection fails fast while Redis is down (no offline queue,
 * server/bus/open-bus.ts), so a send never waits for a reconnect.
 */
class RedisOrMemoryStore implements Store {
  readonly #redis: RedisStore;
  readonly #memory = new MemoryStore();
  readonly #state: OutageState;
  readonly localKeys = false;
  readonly prefix: string;

  constructor(redis: Redis, prefix: string, state: OutageState) {
    this.prefix = prefix;
    this.#state = state;
    this.#redis = new RedisStore({
      prefix,
      sendCommand: (command: string, ...args: string[]) =>
        redis.call(command, ...args) as Promise<number | string | (number | string)[]>,
    });
    // It loads its scripts at once; if Redis is not there yet, the loads
    // fail, and it loads them again on first use. Nobody else awaits these.
    this.#redis.incrementScriptSha.catch(() => {});
    this.#redis.getScriptSha.catch(() => {});
  }

  init(options: Options): void {
    this.#redis.init(options);
    this.#memory.init(options);
  }

  async increment(key: string): Promise<IncrementResponse> {
    try {
      const counted = await deadline(this.#redis.increment(key), REDIS_DEADLINE_MS);
      this.#state.ok();
      return counted;
    } catch (error) {
      this.#state.failed(error);
      return this.#memory.increment(key);
    }
  }

  async decrement(key: string): Promise<void> {
    await Promise.allSettled([this.#redis.decrement(key), this.#memory.decrement(key)]);
  }

  async resetKey(key: string): Promise<void> {
    await Promise.allSettled([this.#redis.resetKey(key), this.#memory.resetKey(key)]);
  }

  shutdown(): void {
    this.#memory.shutdown();
  }
}

function deadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
