/**
 * Who is here and who types across processes (issue 21): two cluster
 * workers relaying through the primary, and two server processes on Redis.
 * Each test puts one person's polls on one process and the other's on the
 * other, and waits on the long polls' own answers.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecvAnswer } from '../../protocol/protocol.ts';
import { serviceUrl } from '../helpers/env.ts';
import {
  type ChatClient,
  chatClient,
  pinnedToWorker,
  untilWaiting,
} from '../helpers/http-client.ts';
import { describeWith, needs } from '../helpers/needs.ts';
import {
  type ServerProcess,
  startServerProcess,
  stopAllServerProcesses,
} from '../helpers/processes.ts';
import { until } from '../helpers/wait.ts';
import { createSharedDatabase, type SharedDatabase, uniquePrefix } from './shared-database.ts';

const POLL_TIMEOUT_MS = 10_000;
const env = {
  POLL_TIMEOUT_MS: String(POLL_TIMEOUT_MS),
  PRESENCE_NOTIFY_MS: '300',
  TYPING_WAKE_MS: '2500',
};

async function waitingNow(client: ChatClient): Promise<number> {
  const metrics = await client.text('/metrics');
  return Number(/^chat_polls_waiting (\d+)$/m.exec(metrics)?.[1] ?? 0);
}

/** Polls as the page does (nickname, people=<version>) until the list names `want`. */
async function pollUntilListed(
  client: ChatClient,
  room: string,
  id: string,
  nickname: string,
  want: string[],
): Promise<RecvAnswer['people']> {
  let version: number | undefined;
  for (let answers = 0; answers < 20; answers += 1) {
    const people = version === undefined ? '' : `&people=${version}`;
    const answer = await client.recv(
      `room=${room}&since=0&client=${id}&nickname=${nickname}${people}`,
    );
    if (answer.people) {
      version = answer.people.version;
      if (JSON.stringify(answer.people.names) === JSON.stringify(want)) return answer.people;
    }
  }
  throw new Error(`${nickname} never saw ${want.join(', ')}`);
}

/** A typist's tag (server/presence/tag.ts): never the client id. */
const TAG = /^[A-Za-z0-9_-]{22}$/;

/** `waiter` holds a poll in `room`; `typist` posts /typing; the poll's answer names the typist. */
async function typingReaches(
  waiter: ChatClient,
  typist: ChatClient,
  metrics: ChatClient,
  room: string,
): Promise<RecvAnswer> {
  const first = await waiter.recv(`room=${room}&since=0&client=client-zed-${room}&nickname=Zed`);
  const before = await waitingNow(metrics);
  const poll = waiter.recv(
    `room=${room}&since=0&client=client-zed-${room}&nickname=Zed&people=${first.people?.version}`,
  );
  await untilWaiting(metrics, before + 1);
  const posted = await typist.post('/typing', {
    room,
    client: `client-ann-${room}`,
    nickname: 'Ann',
  });
  expect(posted.status).toBe(200);
  return poll;
}

describe('cluster mode with 2 workers: who is here and who types', () => {
  let database: SharedDatabase;
  let server: ServerProcess;
  const clients: ChatClient[] = [];

  function clientOn(want: { pid?: number; not?: number }): Promise<[ChatClient, number]> {
    return pinnedToWorker(() => {
      const client = chatClient(server.url, { pinned: true, log: server });
      clients.push(client);
      return client;
    }, want);
  }

  beforeAll(async () => {
    database = await createSharedDatabase();
    server = await startServerProcess({ workers: 2, env: { DATABASE_URL: database.url, ...env } });
  }, 60_000);

  afterAll(async () => {
    for (const client of clients) client.close();
    await stopAllServerProcesses();
    await database?.drop();
  });

  it("lists the people polling either worker in each one's answers", async () => {
    const [ann, annPid] = await clientOn({});
    const [bob] = await clientOn({ not: annPid });
    const [annSees, bobSees] = await Promise.all([
      pollUntilListed(ann, 'people', 'client-ann-people', 'Ann', ['Ann', 'Bob']),
      pollUntilListed(bob, 'people', 'client-bob-people', 'Bob', ['Ann', 'Bob']),
    ]);
    // The same list has the same version on both workers.
    expect(annSees?.version).toBe(bobSees?.version);
  });

  it('wakes a poll on one worker when someone types on the other', async () => {
    const [waiter, waiterPid] = await clientOn({});
    const [typist] = await clientOn({ not: waiterPid });
    const answer = await typingReaches(waiter, typist, chatClient(server.url), 'typing');
    expect(answer.typingOnly).toBe(true);
    expect(answer.typing).toEqual([{ nickname: 'Ann', client: expect.stringMatching(TAG) }]);
    expect(answer.messages).toEqual([]);
  });
});

const redisUrl = serviceUrl('REDIS_URL');

describeWith(
  needs.service('REDIS_URL'),
  'two processes on Redis: who is here and who types',
  () => {
    let database: SharedDatabase;
    let clientA: ChatClient;
    let clientB: ChatClient;

    beforeAll(async () => {
      database = await createSharedDatabase();
      const shared = {
        ...env,
        DATABASE_URL: database.url,
        REDIS_URL: redisUrl!,
        REDIS_PREFIX: uniquePrefix(),
      };
      const [a, b] = await Promise.all([
        startServerProcess({ env: shared }),
        startServerProcess({ env: shared }),
      ]);
      clientA = chatClient(a.url);
      clientB = chatClient(b.url);
    }, 60_000);

    afterAll(async () => {
      clientA?.close();
      clientB?.close();
      await stopAllServerProcesses();
      await database?.drop();
    });

    it("lists the people polling either process in each one's answers", async () => {
      const [annSees, bobSees] = await Promise.all([
        pollUntilListed(clientA, 'people', 'client-ann-people', 'Ann', ['Ann', 'Bob']),
        pollUntilListed(clientB, 'people', 'client-bob-people', 'Bob', ['Ann', 'Bob']),
      ]);
      expect(annSees?.version).toBe(bobSees?.version);
    });

    it('wakes a poll on B when someone types on A', async () => {
      const answer = await typingReaches(clientB, clientA, clientB, 'typing');
      expect(answer.typingOnly).toBe(true);
      expect(answer.typing).toEqual([{ nickname: 'Ann', client: expect.stringMatching(TAG) }]);
    });
  },
);

describeWith(
  needs.service('REDIS_URL'),
  'two processes on Redis: a message ends its typing, a rename shows at once',
  () => {
    let database: SharedDatabase;
    let clientA: ChatClient;
    let clientB: ChatClient;
    let redis: Redis;
    const prefix = uniquePrefix();

    beforeAll(async () => {
      database = await createSharedDatabase();
      redis = new Redis(redisUrl!);
      const shared = {
        ...env,
        // Nothing here may wait for the notice: what is checked comes sooner.
        PRESENCE_NOTIFY_MS: '60000',
        DATABASE_URL: database.url,
        REDIS_URL: redisUrl!,
        REDIS_PREFIX: prefix,
      };
      const [a, b] = await Promise.all([
        startServerProcess({ env: shared }),
        startServerProcess({ env: shared }),
      ]);
      clientA = chatClient(a.url);
      clientB = chatClient(b.url);
      // Both buses live (subscribed, Redis answering): an event published before is dropped.
      for (const client of [clientA, clientB]) {
        await until(
          async () => (await client.get('/health')).text.includes('"ok"'),
          'the bus to be live',
          20_000,
          50,
        );
      }
    }, 60_000);

    afterAll(async () => {
      clientA?.close();
      clientB?.close();
      await redis?.quit();
      await stopAllServerProcesses();
      await database?.drop();
    });

    it("a message sent on A ends its author's typing on B", async () => {
      const room = 'ends';
      const woken = await typingReaches(clientB, clientA, clientB, room);
      expect(woken.typing?.map((typist) => typist.nickname)).toEqual(['Ann']);
      const zed = `room=${room}&client=client-zed-${room}&nickname=Zed`;
      const delivering = clientB.recv(`${zed}&since=0`);
      await until(async () => (await waitingNow(clientB)) === 1, 'Zed to wait');
      const sent = await clientA.post('/send', { room, nickname: 'Ann', text: 'done typing' });
      expect(sent.status).toBe(200);
      const delivered = await delivering;
      expect(delivered.messages.map((message) => message.text)).toEqual(['done typing']);
      // Cy types next: the wake that names him leaves Ann out.
      const told = clientB.recv(`${zed}&since=${delivered.cursor}`);
      await until(async () => (await waitingNow(clientB)) === 1, 'Zed to wait again');
      await clientA.post('/typing', { room, client: `client-cy-${room}`, nickname: 'Cy' });
      const answer = await told;
      expect(answer.typing?.map((typist) => typist.nickname)).toEqual(['Cy']);
    });

    it('a rename on B reaches a poll waiting on A within a second', async () => {
      const room = 'rename';
      await clientB.recv(`room=${room}&since=0&client=client-bob-${room}&nickname=Bob`);
      const first = await clientA.recv(
        `room=${room}&since=0&client=client-ann-${room}&nickname=Ann`,
      );
      const before = await waitingNow(clientA);
      const poll = clientA.recv(
        `room=${room}&since=0&client=client-ann-${room}&nickname=Ann&people=${first.people?.version}`,
      );
      await untilWaiting(clientA, before + 1);
      // A sends its clients to Redis in batches (shared-presence.ts): B can
      // list Ann only once her batch has landed there.
      await until(
        async () => (await redis.zscore(`${prefix}:online:${room}`, `client-ann-${room}`)) !== null,
        "Ann's presence to reach Redis",
      );
      const renamedAt = Date.now();
      const own = await clientB.recv(
        `room=${room}&since=0&client=client-bob-${room}&nickname=Robert`,
      );
      const answer = await poll;
      expect(Date.now() - renamedAt).toBeLessThan(1_000);
      expect(answer.people?.names).toEqual(['Ann', 'Robert']);
      // The renaming poll's own answer carries the list with the rename in it,
      // not the one from before it reached Redis.
      expect(own.people?.names).toEqual(['Ann', 'Robert']);
    });
  },
);
