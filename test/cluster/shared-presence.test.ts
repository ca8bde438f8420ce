/**
 * The online count across two processes sharing Redis, in a quiet room: a
 * poll that waits its whole timeout must still be answered with the clients
 * of both processes (a shared count once expired after `PRESENCE_STALE_MS`,
 * 10 s, while a poll waited 25 s, so quiet rooms showed "1 online" at every
 * timeout). Here both are short, in the same order.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChatClient } from '../helpers/http-client.ts';
import { describeWith, needs } from '../helpers/needs.ts';
import { useChatProcesses } from './fixture.ts';

/** The age past which a shared count used to expire. */
const STALE_MS = 1_000;
/** Longer than STALE_MS: a count expiring at that age would show here. */
const POLL_TIMEOUT_MS = 2 * STALE_MS;

describeWith(needs.service('REDIS_URL'), 'the online count with two processes and Redis', () => {
  const chat = useChatProcesses({
    processes: 2,
    redis: 'shared',
    env: {
      POLL_TIMEOUT_MS: String(POLL_TIMEOUT_MS),
      PRESENCE_STALE_MS: String(STALE_MS),
      // Off: this checks the count a poll gets at its timeout, not the notifications.
      PRESENCE_NOTIFY_MS: '0',
    },
  });
  let clientA: ChatClient;
  let clientB: ChatClient;
  beforeAll(() => {
    [clientA, clientB] = chat.clients as [ChatClient, ChatClient];
  });

  describe('when a client on each process waits out a whole poll in a quiet room', () => {
    it('answers both with both clients online', async () => {
      const hello = await clientA.send({ room: 'quiet', text: 'hello' });
      // Each process learns of the other's client at its next presence sync:
      // poll with since=0 (answered at once) until both count two.
      await expect
        .poll(
          async () => {
            const [onA, onB] = await Promise.all([
              clientA.recv('room=quiet&since=0&client=client-on-a'),
              clientB.recv('room=quiet&since=0&client=client-on-b'),
            ]);
            return [onA.online, onB.online];
          },
          { timeout: 10_000, interval: 100 },
        )
        .toEqual([2, 2]);
      const started = Date.now();
      const [onA, onB] = await Promise.all([
        clientA.recv(`room=quiet&since=${hello.id}&client=client-on-a`),
        clientB.recv(`room=quiet&since=${hello.id}&client=client-on-b`),
      ]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(POLL_TIMEOUT_MS - 100);
      expect([onA.messages, onB.messages]).toEqual([[], []]);
      expect([onA.online, onB.online]).toEqual([2, 2]);
    }, 40_000);
  });
});
