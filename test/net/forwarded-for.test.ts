/**
 * `X-Forwarded-For` from strangers (server/core/client-address.ts): read
 * from the right, only as far as `TRUST_PROXY` trusts, only its last
 * `FORWARDED_FOR_MAX_BYTES`, and only IP addresses, so the tables kept per
 * address stay bounded however long a forged header is; and the requests
 * that come around the proxy, counted.
 */
import { Agent, request } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { compileTrust, forwardedAddress } from '../../server/core/client-address.ts';
import { BoundedKeys } from '../../server/http/rate-limit.ts';
import { startTestChat } from '../helpers/chat.ts';
import { fromAddress } from '../helpers/from-address.ts';
import { ManualClock } from '../helpers/manual-clock.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const fake = (xff: string | undefined, peer = '127.0.0.1') =>
  ({
    socket: { remoteAddress: peer },
    headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
  }) as unknown as Parameters<typeof forwardedAddress>[0];

describe('the address read from X-Forwarded-For', () => {
  const loopback = compileTrust('loopback');

  it('believes only the hops TRUST_PROXY trusts, from the right', () => {
    expect(forwardedAddress(fake('1.1.1.1, 2.2.2.2'), loopback, 1024)).toBe('2.2.2.2');
    expect(forwardedAddress(fake('1.1.1.1, 127.0.0.2'), loopback, 1024)).toBe('1.1.1.1');
    expect(forwardedAddress(fake('1.1.1.1', '10.0.0.1'), loopback, 1024)).toBe('10.0.0.1');
    expect(forwardedAddress(fake('1.1.1.1, 2.2.2.2, 3.3.3.3'), compileTrust(2), 1024)).toBe(
      '2.2.2.2',
    );
    expect(forwardedAddress(fake(undefined), loopback, 1024)).toBe('127.0.0.1');
    expect(forwardedAddress(fake('[2001:db8::1]'), loopback, 1024)).toBe('2001:db8::1');
  });

  it('takes what is not an IP address for the hop that passed it on', () => {
    expect(forwardedAddress(fake('evil'), loopback, 1024)).toBe('127.0.0.1');
    expect(forwardedAddress(fake(`${'x'.repeat(5000)}`), loopback, 1024)).toBe('127.0.0.1');
    expect(forwardedAddress(fake('1.1.1.1, , 2.2.2.2'), compileTrust(true), 1024)).toBe('2.2.2.2');
  });

  it('reads only the last FORWARDED_FOR_MAX_BYTES, from a whole entry', () => {
    const long = `${Array.from({ length: 500 }, (_, i) => `10.0.${i >> 8}.${i & 255}`).join(', ')}`;
    // Trusting every hop reaches the left end of what is read, not of the header.
    const left = forwardedAddress(fake(long), compileTrust(true), 100);
    expect(long.slice(-100)).toContain(left);
    expect(long.startsWith(left)).toBe(false);
  });
});

describe('20,000 polls with 12 KB forged X-Forwarded-For headers', () => {
  it('grow the heap by less than 16 MB', { timeout: 120_000 }, async () => {
    const chat = await startTestChat({ trustProxy: 'loopback' });
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const { port } = new URL(chat.url);
    const garbage = 'x'.repeat(12 * 1024);
    const list = Array.from({ length: 1_000 }, (_, i) => `10.${i >> 8}.${i & 255}.1`).join(', ');
    const forged = (i: number) =>
      i % 2 === 0
        ? `${i}${garbage}`
        : `${list.slice(0, 12 * 1024 - 20)}, 10.9.${(i >> 8) & 255}.${i & 255}`;
    const poll = (i: number) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          {
            agent,
            host: '127.0.0.1',
            port,
            path: `/recv?room=forged&since=0&client=client-${i}`,
            headers: { 'x-forwarded-for': forged(i) },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end();
      });
    try {
      // Each poll is answered at once, with this message: none waits, whatever its address.
      await chat.send({ room: 'forged', text: 'hi' });
      for (let i = 0; i < 200; i += 1) await poll(-1 - i); // Warm up: code, sockets, the room.
      gc();
      const before = process.memoryUsage().heapUsed;
      const statuses = new Map<number, number>();
      for (let i = 0; i < 20_000; i += 16) {
        const batch = await Promise.all(Array.from({ length: 16 }, (_, j) => poll(i + j)));
        for (const status of batch) statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
      gc();
      const grown = process.memoryUsage().heapUsed - before;
      expect([...statuses.keys()]).toEqual([200]);
      expect(grown).toBeLessThan(16 * 2 ** 20);
    } finally {
      agent.destroy();
      await chat.close();
    }
  });
});

describe('chat_requests_untrusted_peer_total', () => {
  it('counts the requests that come straight from a peer TRUST_PROXY does not trust', async () => {
    const chat = await startTestChat({ trustProxy: '10.0.0.1' });
    const direct = fromAddress(chat.url, '127.0.0.2');
    const series = async () => {
      const text = await (await chat.get('/metrics')).text();
      const found = /^chat_requests_untrusted_peer_total (\d+)$/m.exec(text);
      expect(found, 'the series is on /metrics').not.toBeNull();
      return Number(found![1]);
    };
    try {
      const before = await series();
      for (let i = 0; i < 3; i += 1) {
        expect(
          (await direct('GET', '/time', { headers: { 'x-forwarded-for': '1.2.3.4' } })).status,
        ).toBe(200);
      }
      // The three, and the scrape before this one.
      expect(await series()).toBe(before + 4);
    } finally {
      direct.close();
      await chat.close();
    }
  });

  it('is not counted while TRUST_PROXY is unset', async () => {
    const chat = await startTestChat();
    try {
      expect((await chat.get('/time')).status).toBe(200);
      const text = await (await chat.get('/metrics')).text();
      expect(text).toMatch(/^chat_requests_untrusted_peer_total 0$/m);
    } finally {
      await chat.close();
    }
  });
});

describe('the addresses a rate limit counts (BoundedKeys)', () => {
  it('holds at most its bound; past it new addresses share one key, until two windows pass', () => {
    const clock = new ManualClock(0);
    const keys = new BoundedKeys(3, 1_000, () => clock.now());
    expect(['a', 'b', 'c'].map((key) => keys.admit(key))).toEqual(['a', 'b', 'c']);
    expect(keys.admit('d')).toBe('too-many-addresses');
    expect(keys.admit('e')).toBe('too-many-addresses');
    expect(keys.admit('a')).toBe('a');
    expect(keys.size).toBe(3);
    clock.advance(2_000);
    expect(keys.admit('d')).toBe('d');
    expect(keys.size).toBe(1);
  });

  it("past its bound, counts a new person in the overflow it is given (its address's anonymous share)", () => {
    const clock = new ManualClock(0);
    const keys = new BoundedKeys(2, 1_000, () => clock.now());
    expect(keys.admit('10.0.0.1|ann', '10.0.0.1|')).toBe('10.0.0.1|ann');
    expect(keys.admit('10.0.0.1|bob', '10.0.0.1|')).toBe('10.0.0.1|bob');
    expect(keys.admit('10.0.0.2|cid', '10.0.0.2|')).toBe('10.0.0.2|');
    expect(keys.size).toBe(2);
  });
});
