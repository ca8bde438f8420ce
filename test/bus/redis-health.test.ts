/**
 * The Redis heartbeat (server/bus/redis-health.ts), and the send limit that
 * reads it, against a real redis-server of this suite's own, stopped with
 * SIGSTOP (its connections stay open, and nothing answers) and continued.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisHealth, watchRedis } from '../../server/bus/redis-health.ts';
import { silentLog } from '../../server/core/log.ts';
import { createSendLimit, type SendLimit } from '../../server/http/rate-limit.ts';
import { type RedisServer, startRedisServer } from '../cluster/fixture.ts';
import { until } from '../helpers/chat.ts';
import { describeWith, needs } from '../helpers/needs.ts';

const TIMEOUT_MS = 200;

describeWith(needs.command('redis-server'), 'the Redis heartbeat', () => {
  let redis: RedisServer;
  let connections: Redis[];
  let health: RedisHealth;
  let limit: SendLimit;
  const changes: boolean[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    connections = [new Redis(redis.url), new Redis(redis.url, { enableOfflineQueue: false })];
    await Promise.all(
      connections.map((c) => new Promise<void>((resolve) => c.once('ready', () => resolve()))),
    );
    health = watchRedis(
      { subscriber: connections[0]!, publisher: connections[1]! },
      { timeoutMs: TIMEOUT_MS },
    );
    health.onChange((up) => changes.push(up));
    limit = createSendLimit(
      {
        sendRatePerSec: 100,
        sendBurst: 100,
        redisPrefix: 'health-test',
        redisTimeoutMs: TIMEOUT_MS,
      },
      { redis: connections[1], redisHealth: health, log: silentLog, addressOf: () => '192.0.2.1' },
    )!;
  });

  afterAll(async () => {
    health?.close();
    await limit?.close();
    redis?.resume();
    for (const c of connections ?? []) c.disconnect();
    await redis?.stop();
  });

  /** How long one counted send takes. */
  async function timedCheck(): Promise<number> {
    const res = { setHeader() {} } as unknown as ServerResponse;
    const started = performance.now();
    await limit.check({} as IncomingMessage, res);
    return performance.now() - started;
  }

  it('is up while Redis answers', async () => {
    expect(health.up).toBe(true);
    expect(await timedCheck()).toBeLessThan(TIMEOUT_MS);
  });

  describe('when Redis stops answering', () => {
    it('counts it as down within the deadline and a half, and the send limit no longer waits on it', async () => {
      const stopped = performance.now();
      redis.pause();
      await until(() => !health.up, 'the heartbeat to see Redis down');
      const detectedMs = performance.now() - stopped;
      const sends = [await timedCheck(), await timedCheck(), await timedCheck()];
      console.log(
        `Redis stopped: down after ${detectedMs.toFixed(0)} ms (deadline ${TIMEOUT_MS} ms); sends then took ${sends.map((ms) => ms.toFixed(1)).join(', ')} ms`,
      );
      expect(detectedMs).toBeLessThan(TIMEOUT_MS * 1.5 + 250);
      expect(Math.max(...sends)).toBeLessThan(TIMEOUT_MS / 4);
      expect(changes).toEqual([false]);
    });

    it('is up again once a heartbeat is answered', async () => {
      redis.resume();
      await until(() => health.up, 'the heartbeat to see Redis again');
      expect(changes).toEqual([false, true]);
    });
  });

  describe('when a command meets the deadline before the heartbeat does', () => {
    it('counts Redis as down at once, until a heartbeat sent after it answers', async () => {
      health.silent();
      expect(health.up).toBe(false);
      await until(() => health.up, 'the next heartbeat');
      expect(changes).toEqual([false, true, false, true]);
    });
  });
});
