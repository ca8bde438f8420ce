/**
 * The send limit (server/http/rate-limit.ts): express-rate-limit with the
 * standard headers, one count per person (and one per address, its ceiling)
 * across every process that shares Redis, in memory otherwise, and in memory
 * again while Redis is away.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { uniquePrefix } from '../cluster/shared-database.ts';
import { startTestChat, type TestChat, until } from '../helpers/chat.ts';
import { serviceUrl } from '../helpers/env.ts';
import { fromAddress } from '../helpers/from-address.ts';
import {
  type ServerProcess,
  startServerProcess,
  stopAllServerProcesses,
} from '../helpers/processes.ts';
import { startTcpProxy } from '../helpers/tcp-proxy.ts';
import { captureLog } from './log-capture.ts';

const redisUrl = serviceUrl('REDIS_URL');
if (redisUrl === undefined)
  console.warn('REDIS_URL is not set: skipping the shared send-limit tests');

let chat: TestChat | undefined;
afterEach(async () => {
  await chat?.close();
  chat = undefined;
});

/** Sends `count` messages one after another through `post`; the statuses, in order. */
async function statuses(count: number, post: (i: number) => Promise<Response>): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const res = await post(i);
    await res.arrayBuffer();
    seen.push(res.status);
  }
  return seen;
}

const tally = (seen: number[]) => ({
  accepted: seen.filter((s) => s === 200).length,
  limited: seen.filter((s) => s === 429).length,
});

describe('POST /send past the send limit', () => {
  describe('in one process without Redis', () => {
    it('answers with the standard RateLimit headers', async () => {
      chat = await startTestChat({ sendRatePerSec: 1, sendBurst: 3 });
      const res = await chat.post('/send', { text: 'one' });
      expect(res.status).toBe(200);
      // IETF draft 8: the policy (3 sends in a 3 s window) and what is left of it.
      expect(res.headers.get('ratelimit-policy')).toMatch(/^"3-in-3sec"; q=3; w=3/);
      expect(res.headers.get('ratelimit')).toMatch(/^"3-in-3sec"; r=2; t=[0-3]/);
    });

    it('answers 429 rate_limited in the JSON error format, with Retry-After, and counts it', async () => {
      chat = await startTestChat({ sendRatePerSec: 1, sendBurst: 3 });
      const seen = await statuses(5, (i) => chat!.post('/send', { text: `m${i}` }));
      expect(seen).toEqual([200, 200, 200, 429, 429]);
      const res = await chat.post('/send', { text: 'again' });
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(3);
      expect(res.headers.get('ratelimit')).toMatch(/; r=0; /);
      expect(await res.json()).toEqual({
        error: { code: 'rate_limited', message: expect.any(String) },
      });
      expect(await chat.store.after('main', 0, 10)).toHaveLength(3);
      const metrics = await (await chat.get('/metrics')).text();
      expect(metrics).toMatch(/^chat_requests_refused_total\{code="rate_limited"\} 3$/m);
    });

    it('does not limit at all with SEND_RATE=0', async () => {
      chat = await startTestChat({ sendRatePerSec: 0 });
      const seen = await statuses(30, (i) => chat!.post('/send', { text: `m${i}` }));
      expect(tally(seen)).toEqual({ accepted: 30, limited: 0 });
      expect((await chat.post('/send', { text: 'x' })).headers.get('ratelimit')).toBeNull();
    });
  });

  describe.skipIf(redisUrl === undefined)('in two processes sharing Redis', () => {
    let a: ServerProcess;
    let b: ServerProcess;

    beforeAll(async () => {
      const env = {
        DATABASE_URL: 'memory:',
        REDIS_URL: redisUrl!,
        REDIS_PREFIX: uniquePrefix(),
        // 10 sends per 10 s window: the test is over long before it ends.
        SEND_RATE: '1',
        SEND_BURST: '10',
        // An address's ceiling: two people's shares in one window.
        SEND_ADDRESS_RATE: '2',
      };
      [a, b] = await Promise.all([startServerProcess({ env }), startServerProcess({ env })]);
    }, 60_000);

    afterAll(async () => {
      await stopAllServerProcesses();
    });

    it('gives one address one limit across both', async () => {
      const seen = await statuses(20, (i) =>
        fetch(`${i % 2 === 0 ? a.url : b.url}/send`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text: `alternating ${i}` }),
        }),
      );
      expect(tally(seen)).toEqual({ accepted: 10, limited: 10 });
      expect(seen.slice(0, 10).every((s) => s === 200)).toBe(true);
    });

    it('gives each person behind one address a share across both, under the address’s ceiling', async () => {
      // Another address than the test above's, whose sends count in its own ceiling.
      const [toA, toB] = [fromAddress(a.url, '127.0.0.21'), fromAddress(b.url, '127.0.0.21')];
      try {
        const person = (client: string, count: number) =>
          statuses(count, async (i) => {
            const answer = await (i % 2 === 0 ? toA : toB)('POST', '/send', {
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ text: `${client} ${i}`, client }),
            });
            return new Response(answer.body, { status: answer.status });
          });
        // Each person's share holds across both processes: 10 of 15.
        expect(tally(await person('person-ann-0001', 15))).toEqual({ accepted: 10, limited: 5 });
        expect(tally(await person('person-bob-0001', 15))).toEqual({ accepted: 10, limited: 5 });
        // The address's ceiling (20 in the window) is reached: a third person waits for the next window.
        expect(tally(await person('person-cid-0001', 3))).toEqual({ accepted: 0, limited: 3 });
      } finally {
        toA.close();
        toB.close();
      }
    });
  });

  describe.skipIf(redisUrl === undefined)('when Redis is away as the chat starts', () => {
    // rate-limit-redis 6 loads its scripts in init(), at start: a load that
    // fails must not end the process, and the counts go to Redis once it is back.
    it('counts in memory, then in Redis once it answers, shared with other processes', async () => {
      const redis = new URL(redisUrl!);
      const proxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
      const prefix = uniquePrefix();
      const limits = { redisPrefix: prefix, sendRatePerSec: 1, sendBurst: 4 };
      let other: TestChat | undefined;
      try {
        proxy.cut();
        chat = await startTestChat({ redisUrl: `redis://${proxy.address}`, ...limits });
        const away = chat;
        expect((await away.post('/send', { text: 'counted in memory' })).status).toBe(200);
        proxy.restore();
        await until(() => away.ops.bus.up, 'the chat to reach Redis again');
        expect((await away.post('/send', { text: 'counted in redis' })).status).toBe(200);
        other = await startTestChat({ redisUrl: redisUrl!, ...limits });
        const seen = await statuses(4, (i) => other!.post('/send', { text: `other ${i}` }));
        // One count in Redis from the first chat, three here: the fourth is over the burst.
        expect(seen).toEqual([200, 200, 200, 429]);
      } finally {
        await other?.close();
        await chat?.close();
        chat = undefined;
        await proxy.close();
      }
    });
  });

  describe.skipIf(redisUrl === undefined)('while Redis cannot be reached', () => {
    it('still limits, in memory, logs it once, and answers no 5xx', async () => {
      const redis = new URL(redisUrl!);
      const proxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
      try {
        const captured = captureLog();
        chat = await startTestChat(
          {
            redisUrl: `redis://${proxy.address}`,
            redisPrefix: uniquePrefix(),
            sendRatePerSec: 1,
            sendBurst: 4,
          },
          { log: captured.log },
        );
        expect((await chat.post('/send', { text: 'counted in redis' })).status).toBe(200);
        proxy.cut();
        const seen = await statuses(6, (i) => chat!.post('/send', { text: `m${i}` }));
        expect(seen).toEqual([200, 200, 200, 200, 429, 429]);
        const fallbacks = captured.lines.filter((line) => /shared send limit/.test(line.msg));
        expect(fallbacks).toMatchObject([{ level: 'warn', state: 'down' }]);
      } finally {
        await chat?.close();
        chat = undefined;
        await proxy.close();
      }
    });
  });
});

describe('the start-up warning about TRUST_PROXY', () => {
  it('is logged when TRUST_PROXY=true and the chat listens on all interfaces', async () => {
    const captured = captureLog();
    chat = await startTestChat({ trustProxy: true, host: '0.0.0.0' }, { log: captured.log });
    const warning = captured.lines.find((line) => /TRUST_PROXY/.test(line.msg));
    expect(warning).toMatchObject({ level: 'warn' });
    expect(warning?.msg).toMatch(/all interfaces/);
  });

  it('is not logged when TRUST_PROXY names the proxy', async () => {
    const captured = captureLog();
    chat = await startTestChat({ trustProxy: 'loopback', host: '0.0.0.0' }, { log: captured.log });
    expect(captured.lines.filter((line) => /TRUST_PROXY/.test(line.msg))).toEqual([]);
  });
});
