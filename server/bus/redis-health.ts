/**
 * Whether Redis answers: a heartbeat on each connection, with a deadline.
 *
 * A Redis that is dead closes its connections, and ioredis says so at once.
 * A Redis that hangs (stopped, swapping, a network that drops packets
 * without a reset) keeps them open and says nothing: every command waits,
 * and a bus that trusted the open connection would count as live while it
 * carries nothing. So each connection is sent a `PING` every half deadline
 * (one at a time, never piling up), and Redis counts as down while one has
 * gone unanswered for `timeoutMs`, or while a connection is not ready. A
 * command of someone else's that meets the deadline (`silent()`) counts too,
 * until a heartbeat sent after it answers.
 *
 * The bus, the shared send limit and the Redis presence read `up` before
 * they wait on Redis, so none of them waits out a deadline per request while
 * Redis is silent; the metrics show it as `chat_bus_up` 0.
 */
import type { Redis } from 'ioredis';
import { raceDeadline } from '../core/deadline.ts';
import type { Log } from '../core/log.ts';

export interface RedisHealth {
  /** Every connection is ready and none has left a heartbeat unanswered past the deadline. */
  readonly up: boolean;
  /** How long Redis may take to answer before it counts as down. */
  readonly timeoutMs: number;
  /** A command got no answer within the deadline: down until a later heartbeat answers. */
  silent(): void;
  /** Called on each change of `up`; returns a function that stops the calls. */
  onChange(listener: (up: boolean) => void): () => void;
  /** Stops the heartbeat (before the connections are quit). */
  close(): void;
}

export interface RedisHealthOptions {
  timeoutMs: number;
  log?: Log;
  now?: () => number;
}

interface Beat {
  name: string;
  connection: Redis;
  /** When the unanswered heartbeat was sent; undefined when none is out. */
  sentAt: number | undefined;
  /** A heartbeat met the deadline, and none has answered since. */
  silent: boolean;
  deadline: NodeJS.Timeout | undefined;
}

/** Watches `connections` (by name, for the log) until `close()`. */
export function watchRedis(
  connections: Record<string, Redis>,
  options: RedisHealthOptions,
): RedisHealth {
  const { timeoutMs, log = () => {}, now = Date.now } = options;
  const listeners = new Set<(up: boolean) => void>();
  const beats: Beat[] = Object.entries(connections).map(([name, connection]) => ({
    name,
    connection,
    sentAt: undefined,
    silent: false,
    deadline: undefined,
  }));
  /** When someone's command met the deadline; cleared by a heartbeat sent after it. */
  let silentSince: number | undefined;
  let closed = false;

  const isUp = () =>
    silentSince === undefined &&
    beats.every((beat) => beat.connection.status === 'ready' && !beat.silent);
  let up = isUp();

  /** The last change to down was a silence (a disconnection is logged by the connections). */
  let silentDown = false;

  function update(): void {
    const next = isUp();
    if (next === up || closed) return;
    up = next;
    if (!up && (silentSince !== undefined || beats.some((b) => b.silent))) {
      silentDown = true;
      log('warn', `redis: no answer within ${timeoutMs} ms; counting it as down until it answers`);
    } else if (up && silentDown) {
      silentDown = false;
      log('info', 'redis: answering again');
    }
    for (const listener of listeners) listener(up);
  }

  function beat(beat: Beat): void {
    if (closed || beat.sentAt !== undefined || beat.connection.status !== 'ready') return;
    const sentAt = now();
    beat.sentAt = sentAt;
    beat.deadline = setTimeout(() => {
      if (beat.sentAt !== sentAt) return;
      beat.silent = true;
      update();
    }, timeoutMs);
    beat.deadline.unref();
    beat.connection.ping().then(
      () => {
        clearTimeout(beat.deadline);
        beat.sentAt = undefined;
        beat.silent = false;
        if (silentSince !== undefined && sentAt >= silentSince) silentSince = undefined;
        update();
      },
      () => {
        // The connection failed (it reconnects by itself, and says so): try again at the next beat.
        clearTimeout(beat.deadline);
        beat.sentAt = undefined;
        update();
      },
    );
  }

  const timer = setInterval(
    () => {
      for (const b of beats) beat(b);
    },
    Math.max(10, Math.floor(timeoutMs / 2)),
  );
  timer.unref();

  const onStatus = () => update();
  const onReady = (b: Beat) => () => {
    // The handshake of a new connection was answered: Redis answers.
    b.silent = false;
    update();
    beat(b);
  };
  const readyHandlers = beats.map((b) => {
    const handler = onReady(b);
    b.connection.on('ready', handler).on('close', onStatus).on('end', onStatus);
    return handler;
  });

  return {
    get up() {
      return up;
    },
    timeoutMs,
    silent() {
      silentSince ??= now();
      update();
      for (const b of beats) beat(b);
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      closed = true;
      clearInterval(timer);
      beats.forEach((b, i) => {
        clearTimeout(b.deadline);
        b.connection.off('ready', readyHandlers[i]!).off('close', onStatus).off('end', onStatus);
      });
      listeners.clear();
    },
  };
}

/** Rejects with `RedisTimeoutError` when `work` takes longer than `ms` (server/core/deadline.ts). */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  return raceDeadline(work, ms, () => new RedisTimeoutError(`${what}: no answer within ${ms} ms`));
}

export class RedisTimeoutError extends Error {
  override readonly name = 'RedisTimeoutError';
}
