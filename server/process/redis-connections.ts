/**
 * The Redis connections of one process, opened from `REDIS_URL`: a publisher
 * (which also runs the presence commands) and a subscriber (in subscriber
 * mode, it can do nothing else), and the heartbeat that says whether Redis
 * answers on both within `REDIS_TIMEOUT_MS` (`server/bus/redis-health.ts`).
 * The bus, the presence and the send limit are handed these (`server.ts`);
 * this module owns them and quits them last.
 *
 * ioredis is loaded here, when `REDIS_URL` asks for it, not when the server
 * module is: a chat without Redis never pays for loading the client (and
 * Node's TLS), as it never loads the MySQL or MongoDB driver it does not use
 * (`server/store/open-store.ts`).
 */
import type { Redis } from 'ioredis';
import { type RedisHealth, watchRedis } from '../bus/redis-health.ts';
import type { Log } from '../core/log.ts';

export interface RedisConnections {
  publisher: Redis;
  subscriber: Redis;
  health: RedisHealth;
  /** Quits both. Call after the bus and the presence are closed. */
  close(): Promise<void>;
}

/** How long startup waits for Redis before it goes on without it (the bus connects once Redis is there). */
export const READY_WAIT_MS = 5_000;

export async function openRedis(
  url: string,
  log: Log,
  timeoutMs: number,
): Promise<RedisConnections> {
  const { Redis } = await import('ioredis');
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
  const health = watchRedis({ publisher, subscriber }, { timeoutMs, log });
  return {
    publisher,
    subscriber,
    health,
    async close() {
      health.close();
      await Promise.all([quit(publisher), quit(subscriber)]);
    },
  };
}

/** Resolves true once `ready` does, false when `ms` pass first. */
export async function readyWithin(ready: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([ready.then(() => true), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** `QUIT` when connected (flushes what is in flight); otherwise just drop the socket and stop retrying. */
async function quit(connection: Redis): Promise<void> {
  if (connection.status === 'ready') {
    await connection.quit().catch(() => connection.disconnect());
  } else {
    connection.disconnect();
  }
}
