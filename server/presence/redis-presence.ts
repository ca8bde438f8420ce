/**
 * Presence across machines, in Redis: one sorted set per room,
 * `${prefix}:online:${room}`, member = client id, score = when it last polled
 * (ms since the epoch). A room's count is `ZCOUNT` over the window; members
 * older than the window are trimmed as we go, and the key expires once nobody
 * has polled the room for a whole window.
 *
 * Each batch of a process's touches and leaves, and the counts it asks for,
 * is one pipelined round trip (see `SharedPresence` for the batching and the
 * ~1 s cache that keeps `count()` synchronous).
 *
 * While Redis does not answer (`health` says down) a sync fails at once, and
 * one that gets no answer within the deadline fails then: the count falls
 * back to this process's clients (`SharedPresence`), and no sync waits on a
 * silent Redis, nor do syncs pile up behind one.
 *
 * The scores come from each server's clock: servers whose clocks differ by
 * seconds count a client a few seconds longer or shorter, which the grace
 * period absorbs.
 */
import type { Redis } from 'ioredis';
import { type RedisHealth, RedisTimeoutError, withDeadline } from '../bus/redis-health.ts';
import type { Log } from '../core/log.ts';
import { type PresenceBatch, SharedPresence } from './shared-presence.ts';

export interface RedisPresenceOptions {
  /** `REDIS_PREFIX`: keys are `${prefix}:online:${room}`. */
  prefix: string;
  windowMs: number;
  cacheMs?: number;
  /** Whether Redis answers, and its deadline (`REDIS_TIMEOUT_MS`). */
  health?: RedisHealth;
  log?: Log;
}

/** `redis` is a normal (not subscriber) connection; the bus's publisher does. */
export function createRedisPresence(redis: Redis, options: RedisPresenceOptions): SharedPresence {
  const key = (room: string) => `${options.prefix}:online:${room}`;

  const { health } = options;

  async function sync(batch: PresenceBatch): Promise<Map<string, number>> {
    if (health && !health.up) throw new RedisTimeoutError('redis presence: Redis does not answer');
    const now = Date.now();
    const oldest = now - options.windowMs;
    const pipeline = redis.pipeline();
    const touched = new Map<string, Array<number | string>>();
    for (const [room, client] of batch.touches) {
      const members = touched.get(room) ?? [];
      if (members.length === 0) touched.set(room, members);
      members.push(now, client);
    }
    for (const [room, members] of touched) {
      pipeline.zadd(key(room), ...members);
      pipeline.pexpire(key(room), options.windowMs);
    }
    for (const [room, client] of batch.leaves) pipeline.zrem(key(room), client);
    for (const room of batch.rooms) {
      pipeline.zremrangebyscore(key(room), '-inf', `(${oldest}`);
      pipeline.zcount(key(room), oldest, '+inf');
    }
    const exec = pipeline.exec();
    let results: Awaited<typeof exec>;
    try {
      results = health ? await withDeadline(exec, health.timeoutMs, 'redis presence') : await exec;
    } catch (error) {
      if (error instanceof RedisTimeoutError) health?.silent();
      throw error;
    }
    results ??= [];
    for (const [error] of results) if (error) throw error;
    // The counts are the last result of each room's pair, in `batch.rooms` order.
    const counts = results.slice(results.length - batch.rooms.length * 2);
    return new Map(batch.rooms.map((room, i) => [room, Number(counts[2 * i + 1]?.[1] ?? 0)]));
  }

  return new SharedPresence(sync, {
    windowMs: options.windowMs,
    cacheMs: options.cacheMs,
    log: options.log,
    name: 'redis presence',
  });
}
