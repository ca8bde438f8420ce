/**
 * Two server processes on one database with no bus between them: what two
 * `npm start` on one SQLite file, a second systemd instance, PM2 or IIS
 * starting several processes do. Delivery must not depend on a bus: each
 * process's store watch finds the other's messages within STORE_POLL_MS
 * (docs/design.md, "Rules that make delivery correct", rule 2).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChatClient } from '../helpers/http-client.ts';
import { useChatProcesses } from './fixture.ts';

/** Long, so an answer that comes before it can only be a delivery, never the timeout. */
const POLL_TIMEOUT_MS = 20_000;

describe('two server processes on one SQLite file, with no bus', () => {
  const chat = useChatProcesses({
    processes: 2,
    database: 'sqlite',
    env: { POLL_TIMEOUT_MS: String(POLL_TIMEOUT_MS), STORE_POLL_MS: '200' },
  });
  let clientA: ChatClient;
  let clientB: ChatClient;
  beforeAll(() => {
    [clientA, clientB] = chat.clients as [ChatClient, ChatClient];
  });

  describe('when each process has sent in the room and the other sends again', () => {
    it("answers a poll on B with A's newest message, not the poll timeout", async () => {
      await clientA.send({ room: 'repro', text: 'a1' });
      await clientB.send({ room: 'repro', text: 'b2' });
      await clientA.send({ room: 'repro', text: 'a3' });
      const started = Date.now();
      const answer = await clientB.recv('room=repro&since=2');
      expect(answer.messages.map((m) => m.text)).toEqual(['a3']);
      expect(Date.now() - started).toBeLessThan(POLL_TIMEOUT_MS);
    });
  });

  describe('when a poll waits on B and A stores a message', () => {
    it('delivers it to the poll on B', async () => {
      const first = await clientB.send({ room: 'waiting', text: 'b1' });
      const poll = clientB.recv(`room=waiting&since=${first.id}`);
      await clientA.send({ room: 'waiting', text: 'a2' });
      const answer = await poll;
      expect(answer.messages.map((m) => m.text)).toEqual(['a2']);
      expect(answer.cursor).toBe(first.id + 1);
    });
  });
});
