/**
 * The send limit: `POST /send` per person behind a client address, under a
 * ceiling per address (`createLimit` says how the shares work). The typing limit
 * (`createTypingLimit`, `POST /typing`) is the same with a budget of its own
 * (`TYPING_RATE`, `TYPING_BURST`, its own keys): typing never uses up sends;
 * so is the history limit (`createHistoryLimit`, `GET /history`,
 * `HISTORY_RATE`, `HISTORY_BURST`): each page reads the store.
 *
 * - `SEND_BURST` sends per window of `SEND_BURST / SEND_RATE` seconds
 *   (`rateLimitWindow` in config.ts) for each person (`client` id), and
 *   `SEND_ADDRESS_RATE` a second over the same window for an address;
 *   `SEND_RATE=0` turns it off.
 * - Answers carry the standard `RateLimit` and `RateLimit-Policy` headers
 *   (IETF draft 8, `draft-ietf-httpapi-ratelimit-headers-08`); past the
 *   limit, 429 `rate_limited` in the chat's JSON error format, with
 *   `Retry-After`.
 * - The counting is express-rate-limit's: its `MemoryStore`, or with Redis
 *   (`REDIS_URL`) rate-limit-redis on the bus's own connection (the
 *   shares under `<prefix>:send-share:`, the ceilings under
 *   `<prefix>:send-limit:`), so an address and each person behind it have
 *   one limit across every process and machine, not one per process.
 * - While Redis cannot be reached or does not answer, each process counts
 *   in memory instead: the limit holds per process rather than failing
 *   every send or none. A send that finds Redis down (the heartbeat,
 *   `server/bus/redis-health.ts`) counts in memory at once; one that meets
 *   the deadline (`REDIS_TIMEOUT_MS`) tells the heartbeat, so the sends
 *   after it do not wait too.
 *
 * Why not express-rate-limit's middleware: `POST /send` is answered outside
 * Express (`lane.ts`, `send.ts`), and the middleware wants Express's
 * request and response (`req.ip`, `res.append`). What it adds around the
 * store is the few lines of `check` below.
 *
 * The address is the one `TRUST_PROXY` allows (`client-address.ts`, as
 * Express's `req.ip`): behind a proxy it must name the proxy, or every
 * visitor shares the proxy's address.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type IncrementResponse,
  ipKeyGenerator,
  MemoryStore,
  type Options,
  type Store,
} from 'express-rate-limit';
import type { Redis } from 'ioredis';
import { RedisStore } from 'rate-limit-redis';
import { type RedisHealth, RedisTimeoutError, withDeadline } from '../bus/redis-health.ts';
import type { AddressOf } from '../core/client-address.ts';
import { type Config, rateLimitWindow } from '../core/config.ts';
import { httpError } from '../core/errors.ts';
import type { Log } from '../core/log.ts';
import { createOutageState, type OutageState } from '../metrics/outage.ts';

export interface SendLimit {
  /**
   * Counts this request against its person's share (`client`; without one,
   * its address's anonymous share), then, if the share allows it, against
   * its address's ceiling, and sets the `RateLimit` headers on the answer to
   * come. Throws `rate_limited` (or the route's code) past either. A limit
   * without shares (history) counts the address alone and ignores `client`.
   */
  check(req: IncomingMessage, res: ServerResponse, client?: string): Promise<void>;
  /** `redis` or `memory`: where the counts are kept. */
  readonly shared: 'redis' | 'memory';
  close(): Promise<void>;
}

interface LimitOptions {
  redis?: Redis | undefined;
  /** Whether Redis answers; without it, each request tries Redis. */
  redisHealth?: RedisHealth | undefined;
  log: Log;
  addressOf: AddressOf;
}

type Budget = Pick<Config, 'sendRatePerSec' | 'sendBurst' | 'redisPrefix' | 'redisTimeoutMs'>;

/** `POST /send`: a share per person (`SEND_RATE`, `SEND_BURST`) under the address's `SEND_ADDRESS_RATE`. */
export function createSendLimit(
  config: Budget & Partial<Pick<Config, 'sendAddressRate'>>,
  options: LimitOptions,
): SendLimit | undefined {
  return createLimit(config, 'send', 'rate_limited', options, config.sendAddressRate ?? 0);
}

/** `POST /typing`, with its own budget (`typingRatePerSec`, `typingBurst`, `typingAddressRate`). */
export function createTypingLimit(
  config: Pick<Config, 'typingRatePerSec' | 'typingBurst' | 'redisPrefix' | 'redisTimeoutMs'> &
    Partial<Pick<Config, 'typingAddressRate'>>,
  options: LimitOptions,
): SendLimit | undefined {
  const budget = budgetOf(config, config.typingRatePerSec, config.typingBurst);
  return createLimit(
    budget,
    'typing',
    'typing_rate_limited',
    options,
    config.typingAddressRate ?? 0,
  );
}

/**
 * `GET /history` per client address, with its own budget (`historyRatePerSec`,
 * `historyBurst`); no shares: a page reads history without its client id,
 * and a page asks for few.
 */
export function createHistoryLimit(
  config: Pick<Config, 'historyRatePerSec' | 'historyBurst' | 'redisPrefix' | 'redisTimeoutMs'>,
  options: LimitOptions,
): SendLimit | undefined {
  const budget = budgetOf(config, config.historyRatePerSec, config.historyBurst);
  return createLimit(budget, 'history', 'history_rate_limited', options, undefined);
}

/** Another route's rate and burst, in the shape the send limit is counted in. */
function budgetOf(
  config: Pick<Config, 'redisPrefix' | 'redisTimeoutMs'>,
  sendRatePerSec: number,
  sendBurst: number,
): Budget {
  return {
    sendRatePerSec,
    sendBurst,
    redisPrefix: config.redisPrefix,
    redisTimeoutMs: config.redisTimeoutMs,
  };
}

/** One fixed-window count of keys: in Redis (falling back to memory) or in memory. */
interface Counter {
  readonly limit: number;
  /** The `RateLimit` name of its policy, and the policy header. */
  readonly name: string;
  readonly policy: string;
  /** Counts one hit on `key`: the hits so far in the window, and the seconds until it resets. */
  count(key: string): Promise<{ hits: number; reset: number }>;
  close(): Promise<void>;
}

function createCounter(
  window: { limit: number; windowMs: number },
  keyPrefix: string,
  what: string,
  config: Pick<Config, 'redisPrefix' | 'redisTimeoutMs'>,
  options: LimitOptions,
): Counter {
  const store: Store = options.redis
    ? new RedisOrMemoryStore(options.redis, {
        prefix: `${config.redisPrefix}:${keyPrefix}:`,
        state: createOutageState({ name: `redis (shared ${what})`, log: options.log }),
        health: options.redisHealth,
        timeoutMs: config.redisTimeoutMs,
      })
    : new MemoryStore();
  // The stores read only the window from the options.
  void store.init?.({ windowMs: window.windowMs } as Options);
  const { limit } = window;
  const seconds = Math.ceil(window.windowMs / 1000);
  const name = `"${limit}-in-${seconds}sec"`;
  return {
    limit,
    name,
    policy: `${name}; q=${limit}; w=${seconds}`,
    async count(key) {
      const { totalHits, resetTime } = await store.increment(key);
      const reset = resetTime
        ? Math.max(0, Math.ceil((resetTime.getTime() - Date.now()) / 1000))
        : seconds;
      return { hits: totalHits, reset };
    },
    async close() {
      await store.shutdown?.();
    },
  };
}

/**
 * The limit of a route. With `ceilingPerSec` defined (send, typing), fair
 * shares behind one address (docs/design.md, "Limits"):
 * - each person, told apart by the `client` id of the request, counts in
 *   a share of its own, keyed by address and id, so a neighbour behind the
 *   same NAT who sends as fast as it can uses up its share, not theirs; an
 *   address's requests without a `client` id (curl, the 2011 form) share
 *   one anonymous share;
 * - a request its share allows then counts in its address's ceiling
 *   (`ceilingPerSec` a second, over the same window; 0: none), the last line
 *   against one who invents ids. A request its share refuses is not counted
 *   there, so a greedy browser's refused flood does not eat its neighbours'
 *   ceiling.
 * Without it (history), one count per address.
 */
function createLimit(
  config: Budget,
  what: 'send' | 'typing' | 'history',
  code: 'rate_limited' | 'typing_rate_limited' | 'history_rate_limited',
  options: LimitOptions,
  ceilingPerSec: number | undefined,
): SendLimit | undefined {
  const window = rateLimitWindow(config);
  if (!window) return undefined;
  const byAddress = ceilingPerSec === undefined || ceilingPerSec > 0;
  const ceiling = byAddress
    ? createCounter(
        ceilingPerSec === undefined
          ? window
          : {
              windowMs: window.windowMs,
              limit: Math.max(window.limit, Math.round((ceilingPerSec * window.windowMs) / 1000)),
            },
        `${what}-limit`,
        `${what} limit`,
        config,
        options,
      )
    : undefined;
  const shares =
    ceilingPerSec === undefined
      ? undefined
      : createCounter(window, `${what}-share`, `${what} shares`, config, options);
  const addresses = new BoundedKeys(MAX_ADDRESSES, window.windowMs);
  const people = new BoundedKeys(MAX_SHARES, window.windowMs);
  const { addressOf } = options;

  function refuse(res: ServerResponse, counter: Counter, hits: number, reset: number): void {
    res.setHeader('RateLimit-Policy', counter.policy);
    res.setHeader(
      'RateLimit',
      `${counter.name}; r=${Math.max(counter.limit - hits, 0)}; t=${reset}`,
    );
    if (hits > counter.limit) throw httpError(code, undefined, { retryAfter: Math.max(1, reset) });
  }

  return {
    async check(req, res, client) {
      // A request on a pipe or Unix socket (IIS, a socket behind nginx) with
      // no X-Forwarded-For has no address: those share one bucket. An IPv6
      // address counts by its /56, as express-rate-limit advises (one host
      // has many).
      const address = addressOf(req);
      const key =
        address === undefined || address === 'unknown' ? 'no-address' : ipKeyGenerator(address);
      if (shares) {
        // Past the table's bound, a new person counts in its address's anonymous share.
        const share = people.admit(`${key}|${client ?? ''}`, `${key}|`);
        const { hits, reset } = await shares.count(share);
        // The headers tell the person of its own share; the ceiling only refuses.
        refuse(res, shares, hits, reset);
      }
      if (ceiling) {
        const { hits, reset } = await ceiling.count(addresses.admit(key));
        if (!shares || hits > ceiling.limit) refuse(res, ceiling, hits, reset);
      }
    },
    shared: options.redis ? 'redis' : 'memory',
    async close() {
      await Promise.all([ceiling?.close(), shares?.close()]);
    },
  };
}

/** Addresses one limit counts at once, at most (`BoundedKeys`). */
const MAX_ADDRESSES = 100_000;
/**
 * People's shares one limit counts at once, at most (`BoundedKeys`): past
 * it, a new person counts in its address's anonymous share, so a flood of
 * invented ids grows no table, and the people already counted keep theirs.
 */
const MAX_SHARES = 200_000;

/**
 * The table of addresses a limit counts, bounded: past `max` addresses
 * within two windows (how long the counting store keeps a key), the new
 * ones share one key, so a flood of addresses (a forged X-Forwarded-For
 * that a `TRUST_PROXY` too wide believes) shares one budget and grows no
 * table, while the addresses already counted keep theirs.
 */
export class BoundedKeys {
  readonly #max: number;
  readonly #spanMs: number;
  readonly #now: () => number;
  #keys = new Set<string>();
  #since: number;

  constructor(max: number, windowMs: number, now: () => number = Date.now) {
    this.#max = max;
    this.#spanMs = 2 * windowMs;
    this.#now = now;
    this.#since = now();
  }

  /** The key to count `key` under: itself, or the shared one (`overflow`) past the bound. */
  admit(key: string, overflow = 'too-many-addresses'): string {
    const now = this.#now();
    if (now - this.#since >= this.#spanMs) {
      this.#keys = new Set();
      this.#since = now;
    }
    if (this.#keys.has(key)) return key;
    if (this.#keys.size >= this.#max) return overflow;
    this.#keys.add(key);
    return key;
  }

  get size(): number {
    return this.#keys.size;
  }
}

interface RedisOrMemoryOptions {
  prefix: string;
  state: OutageState;
  health: RedisHealth | undefined;
  timeoutMs: number;
}

/**
 * Counts in Redis; while Redis is down, silent or slow, in this process's
 * memory. The publisher connection fails fast while Redis is down (no
 * offline queue, server/process/redis-connections.ts), so a send never waits
 * for a reconnect, and the heartbeat says when it is silent, so a send waits
 * at most one deadline, and only when the heartbeat has not yet seen it.
 */
class RedisOrMemoryStore implements Store {
  readonly #redis: RedisStore;
  readonly #memory = new MemoryStore();
  readonly #state: OutageState;
  readonly #health: RedisHealth | undefined;
  readonly #timeoutMs: number;
  #options = { windowMs: 0 } as Options;
  #scripts: Promise<boolean> = Promise.resolve(false);
  readonly localKeys = false;
  readonly prefix: string;

  constructor(redis: Redis, options: RedisOrMemoryOptions) {
    const { prefix } = options;
    this.prefix = prefix;
    this.#state = options.state;
    this.#health = options.health;
    this.#timeoutMs = options.timeoutMs;
    this.#redis = new RedisStore({
      prefix,
      sendCommand: (command: string, ...args: string[]) =>
        redis.call(command, ...args) as Promise<number | string | (number | string)[]>,
    });
  }

  /**
   * rate-limit-redis (6.x) loads its Lua scripts in `init()`, and the
   * promise it returns is the only place a failed load shows: left alone,
   * it is an unhandled rejection that ends the process when Redis is not
   * there yet at start. A failed load is remembered instead, and the next
   * count loads the scripts again (inside its deadline) before it runs.
   */
  init(options: Options): void {
    this.#options = options;
    this.#scripts = this.#loadScripts();
    this.#memory.init(options);
  }

  #loadScripts(): Promise<boolean> {
    return this.#redis.init(this.#options).then(
      () => true,
      () => false,
    );
  }

  async #countInRedis(key: string): Promise<IncrementResponse> {
    if (!(await this.#scripts)) {
      this.#scripts = this.#loadScripts();
      if (!(await this.#scripts)) throw new Error('the shared limit scripts did not load');
    }
    return this.#redis.increment(key);
  }

  async increment(key: string): Promise<IncrementResponse> {
    if (this.#health?.up === false) {
      this.#state.failed(new RedisTimeoutError('Redis does not answer'));
      return this.#memory.increment(key);
    }
    try {
      const counted = await withDeadline(
        this.#countInRedis(key),
        this.#timeoutMs,
        'shared send limit',
      );
      this.#state.ok();
      return counted;
    } catch (error) {
      if (error instanceof RedisTimeoutError) this.#health?.silent();
      this.#state.failed(error);
      return this.#memory.increment(key);
    }
  }

  async decrement(key: string): Promise<void> {
    await Promise.allSettled([
      this.#shared(() => this.#redis.decrement(key)),
      this.#memory.decrement(key),
    ]);
  }

  async resetKey(key: string): Promise<void> {
    await Promise.allSettled([
      this.#shared(() => this.#redis.resetKey(key)),
      this.#memory.resetKey(key),
    ]);
  }

  /** A Redis command that nobody waits on for longer than the deadline. */
  async #shared(command: () => Promise<void>): Promise<void> {
    if (this.#health?.up === false) return;
    await withDeadline(command(), this.#timeoutMs, 'shared send limit');
  }

  shutdown(): void {
    this.#memory.shutdown();
  }
}
