/**
 * Two server processes on two ports, sharing one database and one Redis:
 * what separate machines behind a load balancer do.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { pollUntil } from '../helpers/catch-up.ts';
import type { SendBody } from '../helpers/chat.ts';
import { type ChatClient, untilWaiting } from '../helpers/http-client.ts';
import { describeWith, needs } from '../helpers/needs.ts';
import type { ServerProcess } from '../helpers/processes.ts';
import { useChatProcesses } from './fixture.ts';

const POLL_TIMEOUT_MS = 10_000;

describeWith(needs.service('REDIS_URL'), 'two server processes with the Redis bus', () => {
  const chat = useChatProcesses({
    processes: 2,
    redis: 'shared',
    env: { POLL_TIMEOUT_MS: String(POLL_TIMEOUT_MS) },
  });
  let a: ServerProcess;
  let clientA: ChatClient;
  let clientB: ChatClient;
  beforeAll(() => {
    a = chat.servers[0]!;
    [clientA, clientB] = chat.clients as [ChatClient, ChatClient];
  });

  describe('when a poll waits on B and a message is sent to A', () => {
    it('answers the poll with that message through Redis', async () => {
      const latencies: number[] = [];
      let cursor = 0;
      for (let round = 1; round <= 5; round += 1) {
        const poll = clientB.recv(`room=fanout&since=${cursor}`);
        await untilWaiting(clientB, 1);
        const start = performance.now();
        const sent = await clientA.send({ room: 'fanout', text: `round ${round}` });
        const answer = await poll;
        latencies.push(performance.now() - start);
        // An empty answer here would be the poll timing out: the bus did not deliver.
        expect(answer.messages.map((m) => m.text)).toEqual([`round ${round}`]);
        expect(answer.cursor).toBe(sent.id);
        cursor = answer.cursor;
      }
      console.log(
        `A → Redis → B delivery, send start to poll answer (ms): ${latencies.map((ms) => ms.toFixed(1)).join(', ')}`,
      );
    });
  });

  describe('when clients poll the same room on different processes', () => {
    it('counts every one of them online on both', async () => {
      await clientA.send({ room: 'presence', text: 'hello' });
      const seen: Array<[number, number]> = [];
      const deadline = Date.now() + 10_000;
      // Each process learns the other's clients at its next presence sync
      // (counts are cached ~1 s): poll as real clients do until both agree.
      for (;;) {
        const [onA, onB] = await Promise.all([
          clientA.recv('room=presence&since=0&client=client-on-a'),
          clientB.recv('room=presence&since=0&client=client-on-b'),
        ]);
        seen.push([onA.online, onB.online]);
        if (onA.online === 2 && onB.online === 2) break;
        expect(Date.now(), `online counts seen: ${JSON.stringify(seen)}`).toBeLessThan(deadline);
      }
      expect(seen.flat().every((n) => n >= 1 && n <= 2)).toBe(true);
    });
  });

  describe('when a send is retried with its key on the other process', () => {
    it('stores it once and answers both with the same message', async () => {
      const fields = { room: 'retries', text: 'only once', key: 'retry-key-1' };
      const [first, retried] = await Promise.all([clientA.send(fields), clientB.send(fields)]);
      const again = await clientA.send(fields);
      expect(retried.id).toBe(first.id);
      expect(again.id).toBe(first.id);
      const history = (await clientB.get('/history?room=retries')).body as { messages: unknown[] };
      expect(history.messages).toHaveLength(1);
    });
  });

  describe('when a process gets SIGTERM while polls wait on it', () => {
    it('answers them at once with an empty list, and they miss nothing on the other process', async () => {
      const first = await clientA.send({ room: 'shutdown', text: 'before' });
      const clients = ['c1', 'c2', 'c3', 'c4', 'c5'];
      const polls = clients.map(() => clientA.recv(`room=shutdown&since=${first.id}`));
      await untilWaiting(clientA, clients.length);

      const start = performance.now();
      a.signal('SIGTERM');
      const answers = await Promise.all(polls);
      const elapsed = performance.now() - start;
      for (const answer of answers) {
        expect(answer).toMatchObject({ messages: [], cursor: first.id });
      }
      // "At once": well before the poll timeout that would otherwise have ended them.
      expect(elapsed).toBeLessThan(POLL_TIMEOUT_MS / 2);
      expect((await a.exited).code).toBe(0);
      console.log(
        `SIGTERM to empty answers of ${clients.length} waiting polls: ${elapsed.toFixed(0)} ms`,
      );

      // The clients come back on B with their cursors while B takes new messages.
      const sent: SendBody[] = [];
      const repolls = answers.map((answer) => clientB.recv(`room=shutdown&since=${answer.cursor}`));
      for (const text of ['after 1', 'after 2', 'after 3']) {
        sent.push(await clientB.send({ room: 'shutdown', text }));
      }
      const got = await Promise.all(
        (await Promise.all(repolls)).map((answer) =>
          pollUntil(clientB.recv, 'shutdown', answer, sent.at(-1)!.id),
        ),
      );
      for (const ids of got) expect(ids).toEqual(sent.map((s) => s.id));
    });
  });
});
