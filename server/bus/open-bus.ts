/**
 * Picks the bus, and the presence that goes with it, from the config:
 *
 * | set-up                          | bus                  | presence                 |
 * |---------------------------------|----------------------|--------------------------|
 * | `REDIS_URL` set                 | `RedisBus`           | Redis sorted sets        |
 * | a cluster worker, no Redis      | `ClusterBus` (IPC)   | kept by the primary      |
 * | one process                     | `LocalBus`           | `LocalPresence`          |
 *
 * This module owns the Redis connections: it opens them from the URL, hands
 * them to the bus and the presence, and `close()` quits them after those are
 * closed.
 */
import cluster from 'node:cluster';
import { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import { createClusterPresence } from '../hub/cluster-presence.ts';
import { LocalPresence, type Presence } from '../hub/presence.ts';
import { createRedisPresence } from '../hub/redis-presence.ts';
import type { Log } from '../log.ts';
import { type Bus, LocalBus } from './bus.ts';
import { ClusterBus } from './cluster-bus.ts';
import { RedisBus } from './redis-bus.ts';

export interface OpenedBus {
  bus: Bus;
  presence: Presence;
  /** The Redis publisher connection, when there is Redis: others may share it (the send limit's counts). */
  redis?: Redis;
  /** Quits the connections this module opened. Call after `bus.close()` and `presence.close()`. */
  close(): Promise<void>;
}

export type BusConfig = Pick<
  Config,
  'redisUrl' | 'redisPrefix' | 'pollTimeoutMs' | 'presenceGraceMs'
>;

/** How long startup waits for Redis before it goes on without it (the bus connects once Redis is there). */
const READY_WAIT_MS = 5_000;

export async function openBus(config: BusConfig, log: Log): Promise<OpenedBus> {
  const windowMs = config.pollTimeoutMs + config.presenceGraceMs;
  if (config.redisUrl !== undefined)
    return openRedisBus(config.redisUrl, config.redisPrefix, windowMs, log);
  if (cluster.isWorker) {
    return {
      bus: new ClusterBus(),
      presence: createClusterPresence({ windowMs, log }),
      close: async () => {},
    };
  }
  return { bus: new LocalBus(), presence: new LocalPresence(windowMs), close: async () => {} };
}

async function openRedisBus(
  url: string,
  prefix: string,
  windowMs: number,
  log: Log,
): Promise<OpenedBus> {
  // The publisher fails fast while Redis is down (no offline queue): a send
  // must not wait for Redis, and a message queued for minutes is worth
  // nothing once the store has caught everyone up. The subscriber keeps the
  // default queue so its SUBSCRIBE goes out as soon as Redis is reachable.
  const publisher = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  const subscriber = new Redis(url);
  for (const [name, connection] of [
    ['publisher', publisher],
    ['subscriber', subscriber],
  ] as const) {
    // ioredis retries forever (backing off up to 2 s); log the first error of each outage only.
    let down = false;
    connection.on('error', (error: Error) => {
      if (!down) log('warn', `redis ${name}: ${error.message}; reconnecting`);
      down = true;
    });
    connection.on('ready', () => {
      down = false;
    });
  }

  const bus = new RedisBus(publisher, subscriber, { channel: `${prefix}:messages`, log });
  const presence = createRedisPresence(publisher, { prefix, windowMs, log });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), READY_WAIT_MS);
  });
  const late = await Promise.race([bus.ready().then(() => false), timedOut]);
  clearTimeout(timer);
  if (late) log('warn', `redis bus: not connected after ${READY_WAIT_MS} ms; starting anyway`);

  return {
    bus,
    presence,
    redis: publisher,
    async close() {
      await Promise.all([quit(publisher), quit(subscriber)]);
    },
  };
}

/** `QUIT` when connected (flushes what is in flight); otherwise just drop the socket and stop retrying. */
async function quit(connection: Redis): Promise<void> {
  if (connection.status === 'ready') {
    await connection.quit().catch(() => connection.disconnect());
  } else {
    connection.disconnect();
  }
}
