/**
 * Cluster mode on a SQLite file: the workers' writes are committed by one
 * writer thread in the primary, which relays each message it commits to
 * the other workers (server/store/cluster-writer.ts). The suite's other
 * cluster tests run on MariaDB in CI; these are the SQLite path's own.
 *
 * A pinned client (one keep-alive connection) talks to one worker
 * throughout, as in cluster-mode.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type ChatClient, pinnedToWorker, untilWaiting } from '../helpers/http-client.ts';
import { describeWith, needs } from '../helpers/needs.ts';
import type { ServerProcess } from '../helpers/processes.ts';
import { holdWriteLock } from '../helpers/sqlite-lock.ts';
import { useChatProcesses } from './fixture.ts';

type Chat = ReturnType<typeof useChatProcesses>;

const POLL_TIMEOUT_MS = 10_000;
const STORE_TIMEOUT_MS = 1_000;
/** Room for a loaded machine on top of STORE_TIMEOUT_MS (and the writer's second of grace). */
const MARGIN_MS = 2_500;

/** A pinned client that reached the worker wanted (a given pid, or another than `not`), and its pid. */
function pinnedOn(chat: Chat, want: { pid?: number; not?: number }): Promise<[ChatClient, number]> {
  const server = chat.servers[0]!;
  return pinnedToWorker(() => chat.client(server, { pinned: true, log: server }), want);
}

describe('cluster mode on a SQLite file', () => {
  const chat = useChatProcesses({
    workers: 2,
    database: 'sqlite',
    env: {
      POLL_TIMEOUT_MS: String(POLL_TIMEOUT_MS),
      STORE_TIMEOUT_MS: String(STORE_TIMEOUT_MS),
      // The store watch would find a message the relay lost only after the poll timeout.
      STORE_POLL_MS: '60000',
    },
  });
  let server: ServerProcess;
  let onA: ChatClient;
  let onB: ChatClient;
  let pidA: number;
  let pidB: number;
  beforeAll(async () => {
    server = chat.servers[0]!;
    [onA, pidA] = await clientOn({});
    [onB, pidB] = await clientOn({ not: pidA });
  });

  const clientOn = (want: { pid?: number; not?: number }) => pinnedOn(chat, want);

  describe('when both workers send into one room at once', () => {
    it('stores every message once with dense ids, and polls on both workers get them all in order', async () => {
      const room = 'both-at-once';
      // A pinned client has one connection: the polls go on their own, so the sends do not queue behind them.
      const [pollA] = await clientOn({ pid: pidA });
      const [pollB] = await clientOn({ pid: pidB });
      const polls = [pollA, pollB].map(async (client) => {
        const seen: number[] = [];
        let cursor = 0;
        while (seen.length < 40) {
          const answer = await client.recv(`room=${room}&since=${cursor}`);
          seen.push(...answer.messages.map((m) => m.id));
          cursor = answer.cursor;
        }
        return seen;
      });
      const [probeA] = await clientOn({ pid: pidA });
      const [probeB] = await clientOn({ pid: pidB });
      await Promise.all([untilWaiting(probeA, 1), untilWaiting(probeB, 1)]);
      const sent = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 === 0 ? onA : onB).send({ room, text: `m${i}` }),
        ),
      );
      const ids = sent.map((s) => s.id).sort((x, y) => x - y);
      expect(ids).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      for (const seen of await Promise.all(polls)) expect(seen).toEqual(ids);
    });
  });

  describe('when a poll waits on one worker and the other sends', () => {
    it('is answered by the relay the primary sends as it commits', async () => {
      const room = 'relay-on-commit';
      const first = await onB.send({ room, text: 'first' });
      const poll = onA.recv(`room=${room}&since=${first.id}`);
      await untilWaiting((await clientOn({ pid: pidA }))[0], 1);
      const sent = await onB.send({ room, text: 'from B' });
      const answer = await poll;
      expect(answer.messages.map((m) => m.text)).toEqual(['from B']);
      expect(answer.cursor).toBe(sent.id);
    });
  });

  describe('when another process holds the file’s write lock', () => {
    it('answers a send 503 within STORE_TIMEOUT_MS, stores nothing, and sends again once it is free', async () => {
      const room = 'locked-cluster';
      const file = chat.database.url.slice('sqlite://'.length);
      const lock = await holdWriteLock(file);
      let released = false;
      try {
        const started = performance.now();
        const res = await onA.post('/send', { room, nickname: 'Ann', text: 'while locked' });
        expect(res.status).toBe(503);
        expect(performance.now() - started).toBeLessThan(STORE_TIMEOUT_MS + MARGIN_MS);
        // The loop does not wait on the disk: /time answers meanwhile.
        expect((await onB.get('/time')).status).toBe(200);
        await lock.release();
        released = true;
        const after = await onB.send({ room, text: 'after' });
        const history = (await onA.get(`/history?room=${room}`)).body as {
          messages: { text: string }[];
        };
        expect(history.messages.map((m) => m.text)).toEqual(['after']);
        expect(after.id).toBe(1);
      } finally {
        if (!released) await lock.release();
      }
    });
  });

  describe('when the primary is frozen (SIGSTOP)', () => {
    it('answers sends 503 within STORE_TIMEOUT_MS, and stores again once it runs', async () => {
      const room = 'frozen-primary';
      process.kill(server.pid, 'SIGSTOP');
      try {
        const started = performance.now();
        const res = await onA.post('/send', { room, nickname: 'Ann', text: 'nobody commits' });
        expect(res.status).toBe(503);
        expect(performance.now() - started).toBeLessThan(STORE_TIMEOUT_MS + MARGIN_MS);
        expect((await onB.get('/time')).status).toBe(200);
      } finally {
        process.kill(server.pid, 'SIGCONT');
      }
      const sent = await onB.send({ room, text: 'thawed', key: 'thawed-1' });
      const history = (await onA.get(`/history?room=${room}`)).body as {
        messages: { id: number; text: string }[];
      };
      // The 503'd send was refused unrun by the writer (its deadline had passed) or never reached it.
      expect(history.messages.map((m) => m.text)).toEqual(['thawed']);
      expect(history.messages[0]!.id).toBe(sent.id);
    });
  });
});

describeWith(needs.service('REDIS_URL'), 'cluster mode on a SQLite file, with Redis', () => {
  const chat = useChatProcesses({
    workers: 2,
    database: 'sqlite',
    redis: 'shared',
    env: { POLL_TIMEOUT_MS: String(POLL_TIMEOUT_MS), STORE_POLL_MS: '60000' },
  });

  describe('when a poll waits on one worker and the other sends', () => {
    it('is answered once, through Redis: the primary writes but does not relay', async () => {
      const [sender, senderPid] = await pinnedOn(chat, {});
      const [waiter, waiterPid] = await pinnedOn(chat, { not: senderPid });
      const room = 'redis-and-one-writer';
      const first = await sender.send({ room, text: 'first' });
      const poll = waiter.recv(`room=${room}&since=${first.id}`);
      await untilWaiting((await pinnedOn(chat, { pid: waiterPid }))[0], 1);
      const sent = await sender.send({ room, text: 'through Redis' });
      const answer = await poll;
      expect(answer.messages.map((m) => m.text)).toEqual(['through Redis']);
      expect(answer.cursor).toBe(sent.id);
      const metrics = await waiter.text('/metrics');
      expect(metrics).toContain('chat_info{store="sqlite",bus="redis"} 1');
    });
  });
});
