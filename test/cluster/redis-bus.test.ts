/**
 * `RedisBus` and Redis presence against the real Redis, in this process:
 * several buses on one channel stand for several servers.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { BusEvent } from '../../server/bus/bus.ts';
import { RedisBus } from '../../server/bus/redis-bus.ts';
import { createRedisPresence } from '../../server/presence/redis-presence.ts';
import type { Message } from '../../server/store/store.ts';
import { until } from '../helpers/chat.ts';
import { serviceUrl } from '../helpers/env.ts';
import { message } from '../helpers/message.ts';
import { describeWith, needs } from '../helpers/needs.ts';
import { uniquePrefix } from './shared-database.ts';

const redisUrl = serviceUrl('REDIS_URL');

describeWith(needs.service('REDIS_URL'), 'RedisBus', () => {
  const connections: Redis[] = [];
  const prefix = uniquePrefix();
  const connect = () => {
    const connection = new Redis(redisUrl!);
    connections.push(connection);
    return connection;
  };
  const openBus = async () => {
    const bus = new RedisBus(connect(), connect(), { channel: `${prefix}:messages` });
    await bus.ready();
    const heard: Message[] = [];
    bus.onMessage((m) => heard.push(m));
    return { bus, heard };
  };
  let one: Awaited<ReturnType<typeof openBus>>;
  let two: Awaited<ReturnType<typeof openBus>>;

  beforeAll(async () => {
    [one, two] = await Promise.all([openBus(), openBus()]);
  });

  afterAll(async () => {
    await Promise.all([one?.bus.close(), two?.bus.close()]);
    await Promise.all(connections.map((c) => c.quit()));
  });

  it('delivers a message to the other servers and not back to its sender', async () => {
    one.bus.publish(message(1));
    two.bus.publish(message(2));
    await until(() => one.heard.length === 1 && two.heard.length === 1, 'both deliveries');
    expect(one.heard.map((m) => m.id)).toEqual([2]);
    expect(two.heard.map((m) => m.id)).toEqual([1]);
  });

  it('ignores payloads on its channel that are not messages', async () => {
    const before = two.heard.length;
    const outsider = connect();
    await outsider.publish(`${prefix}:messages`, 'not json');
    await outsider.publish(`${prefix}:messages`, JSON.stringify({ o: 'someone', m: { id: -1 } }));
    one.bus.publish(message(3));
    await until(() => two.heard.length > before, 'the real message');
    expect(two.heard.slice(before).map((m) => m.id)).toEqual([3]);
  });
});

describeWith(needs.service('REDIS_URL'), 'RedisBus events (someone types)', () => {
  const connections: Redis[] = [];
  const channel = `${uniquePrefix()}:messages`;
  afterAll(async () => {
    await Promise.all(connections.map((c) => c.quit().catch(() => {})));
  });
  const openBus = async () => {
    // The publisher as the server opens it (redis-connections.ts): no offline queue.
    const publisher = new Redis(redisUrl!, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    const subscriber = new Redis(redisUrl!);
    connections.push(publisher, subscriber);
    const bus = new RedisBus(publisher, subscriber, { channel });
    await bus.ready();
    const events: BusEvent[] = [];
    const messages: Message[] = [];
    bus.onEvent((event) => events.push(event));
    bus.onMessage((m) => messages.push(m));
    return { bus, publisher, events, messages };
  };
  const typing = (client: string): BusEvent => ({
    kind: 'typing',
    room: 'main',
    client,
    nickname: 'Ann',
  });

  it('carries an event to the other servers, apart from the messages', async () => {
    const [one, two] = await Promise.all([openBus(), openBus()]);
    one.bus.publishEvent(typing('client-one'));
    await until(() => two.events.length === 1, 'the event');
    expect(two.events).toEqual([typing('client-one')]);
    expect(two.messages).toEqual([]);
    expect(one.events).toEqual([]);
    await Promise.all([one.bus.close(), two.bus.close()]);
  });

  it('drops an event while it cannot publish, and never sends it later', async () => {
    const [one, two] = await Promise.all([openBus(), openBus()]);
    one.publisher.disconnect(true); // reconnects by itself
    one.bus.publishEvent(typing('client-dropped'));
    await new Promise<void>((resolve) => one.publisher.once('ready', () => resolve()));
    one.bus.publishEvent(typing('client-after'));
    // One channel, in order: had the first been queued, it would come first.
    await until(() => two.events.length >= 1, 'the event after the outage');
    expect(two.events.map((e) => (e.kind === 'typing' ? e.client : e.kind))).toEqual([
      'client-after',
    ]);
    await Promise.all([one.bus.close(), two.bus.close()]);
  });
});

describeWith(needs.service('REDIS_URL'), 'Redis presence', () => {
  const connections: Redis[] = [];
  afterAll(async () => {
    await Promise.all(connections.map((c) => c.quit()));
  });

  it('counts the clients of every server, and drops one that leaves', async () => {
    const prefix = uniquePrefix();
    const presences = [1, 2].map(() => {
      const connection = new Redis(redisUrl!);
      connections.push(connection);
      return createRedisPresence(connection, { prefix, windowMs: 30_000, cacheMs: 0 });
    });
    const [a, b] = presences as [
      ReturnType<typeof createRedisPresence>,
      ReturnType<typeof createRedisPresence>,
    ];
    a.touch('lobby', 'client-a');
    b.touch('lobby', 'client-b');
    b.touch('lobby', 'client-c');
    // A fresh count is asked for at each read; it arrives with the next sync.
    await until(() => a.count('lobby') === 3, 'server A to count 3', 5_000);
    // B has two clients of its own: 3 means it counted A's through Redis too.
    await until(() => b.count('lobby') === 3, 'server B to count 3', 5_000);
    b.leave('lobby', 'client-c');
    await until(() => a.count('lobby') === 2, 'server A to count 2 after a leave', 5_000);
    await Promise.all(presences.map((p) => p.close()));
  });
});
