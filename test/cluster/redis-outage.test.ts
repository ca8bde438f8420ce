/**
 * Redis goes away and comes back, between two servers that share a store.
 *
 * Both servers run in this test process (real HTTP on port 0, one shared
 * store) and reach the real Redis through a TCP proxy the test can cut.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RedisBus } from '../../server/bus/redis-bus.ts';
import { MemoryStore } from '../../server/store/memory-store.ts';
import { pollUntil } from '../helpers/catch-up.ts';
import { startTestChat, type TestChat, until } from '../helpers/chat.ts';
import { serviceUrl } from '../helpers/env.ts';
import { describeWith, needs } from '../helpers/needs.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { uniquePrefix } from './shared-database.ts';

const redisUrl = serviceUrl('REDIS_URL');
/** Long: an answer before it is a delivery, not the timeout's empty answer. */
const POLL_TIMEOUT_MS = 20_000;
const room = 'outage';

describeWith(needs.service('REDIS_URL'), 'when Redis is cut between two servers', () => {
  let proxy: TcpProxy;
  let a: TestChat;
  let b: TestChat;
  const store = new MemoryStore();
  const lastId = async () => (await store.before(room, undefined, 1))[0]?.id ?? 0;
  const live = (chat: TestChat) => (chat.bus as RedisBus).live;

  beforeAll(async () => {
    const redis = new URL(redisUrl!);
    proxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
    const config = {
      redisUrl: `redis://${proxy.address}`,
      redisPrefix: uniquePrefix(),
      pollTimeoutMs: POLL_TIMEOUT_MS,
      storePollMs: 100,
    };
    [a, b] = await Promise.all([
      startTestChat(config, { store }),
      startTestChat(config, { store }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await proxy?.close();
  });

  it('delivers through Redis while it is up', async () => {
    expect(a.bus.kind).toBe('redis');
    const poll = b.recv(`room=${room}&since=0`);
    await until(() => b.hub.waiting === 1, 'the poll on B');
    await a.send({ room, text: 'before the cut' });
    expect((await poll).messages.map((m) => m.text)).toEqual(['before the cut']);
  });

  it('still takes sends, answers local polls, and the other server finds them in the store', async () => {
    const cursor = await lastId();
    const localPoll = a.recv(`room=${room}&since=${cursor}`);
    const remotePoll = b.recv(`room=${room}&since=${cursor}`);
    await until(() => a.hub.waiting === 1 && b.hub.waiting === 1, 'both polls waiting');

    proxy.cut();
    await until(() => !live(a) && !live(b), 'both buses to notice the cut');
    const sent = [];
    for (const text of ['cut 1', 'cut 2', 'cut 3']) sent.push(await a.send({ room, text }));
    const ids = sent.map((s) => s.id);

    // The poll on the sending server is answered at once, by its own hub.
    const local = await localPoll;
    expect(local.messages[0]?.id).toBe(ids[0]);
    expect(await pollUntil(a.recv, room, local, ids.at(-1)!)).toEqual(ids);

    // The bus is down: the other server's store watch finds the messages
    // within STORE_POLL_MS, long before the poll's timeout.
    const started = Date.now();
    const remote = await remotePoll;
    expect(remote.messages.length).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(POLL_TIMEOUT_MS / 2);
    expect(await pollUntil(b.recv, room, remote, ids.at(-1)!)).toEqual(ids);
  });

  it('reconnects by itself and delivers through Redis again', async () => {
    proxy.restore();
    await until(() => live(a) && live(b), 'both buses to reconnect', 15_000);
    const cursor = await lastId();
    const poll = b.recv(`room=${room}&since=${cursor}`);
    await until(() => b.hub.waiting === 1, 'the poll on B');
    const sent = await a.send({ room, text: 'after the cut' });
    // Not the empty answer of a timeout: the bus brought it.
    expect((await poll).messages.map((m) => m.id)).toEqual([sent.id]);
  });
});
