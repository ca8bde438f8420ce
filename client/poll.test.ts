/**
 * The loop's decisions, with a scripted transport in place of the network:
 * what it polls with, what it hands on (through a tab's room state, as the
 * page wires them), and how it treats errors. The real network, server and
 * browser are in the e2e suite (`e2e/reconnect.spec.ts`, `e2e/tabs.spec.ts`).
 */
import { describe, expect, it } from 'vitest';
import { ApiError, type Message, type RecvAnswer } from './api.ts';
import { type ConnectionStatus, Poller } from './poll.ts';
import { RoomState, type RoomStateOptions } from './room-state.ts';

const message = (id: number): Message => ({
  id,
  room: 'main',
  nickname: 'Ann',
  text: `message ${id}`,
  time: '2026-11-30T00:00:00.000Z',
});
const answer = (ids: number[], online = 1): RecvAnswer => ({
  messages: ids.map(message),
  cursor: ids.at(-1) ?? 0,
  online,
});

/** The answer to a cursor ahead of every message of the room: the room was reset. */
const resetAnswer = (head: number, online = 1): RecvAnswer => ({
  messages: [],
  cursor: head,
  online,
  reset: true,
});

/** A poller whose transport plays `script` in order, then waits until stopped. */
function scripted(
  script: (RecvAnswer | ApiError)[],
  options: Partial<Pick<RoomStateOptions, 'cursor' | 'onReset'>> & {
    query?: () => Record<string, string>;
  } = {},
) {
  const sinces: number[] = [];
  const queries: Record<string, string>[] = [];
  const delivered: number[][] = [];
  const answers: RecvAnswer[] = [];
  const statuses: ConnectionStatus[] = [];
  const online: number[] = [];
  let pings = 0;
  let idle: () => void = () => {};
  const settled = new Promise<void>((resolve) => {
    idle = resolve;
  });
  const state = new RoomState({
    cursor: options.cursor ?? 0,
    onMessages: (messages) => delivered.push(messages.map((m) => m.id)),
    onOnline: (count) => online.push(count),
    onReset: options.onReset,
    onAnswer: (answer) => answers.push(answer),
  });
  const poller = new Poller({
    room: 'main',
    client: 'tab-12345678',
    cursor: () => state.cursor,
    query: options.query,
    onAnswer: (answer) => state.apply(answer),
    onStatus: (status) => statuses.push(status),
    backoff: { random: () => 0 },
    ping: async () => {
      pings += 1;
    },
    recv: (_room, since, _client, signal, query) => {
      sinces.push(since);
      if (query) queries.push(query);
      const next = script.shift();
      if (next instanceof ApiError) return Promise.reject(next);
      if (next) return Promise.resolve(next);
      idle();
      return new Promise((_resolve, reject) =>
        signal?.addEventListener('abort', () => reject(signal.reason)),
      );
    },
  });
  return {
    poller,
    state,
    sinces,
    queries,
    answers,
    delivered,
    statuses,
    online,
    pings: () => pings,
    /** Resolves when the script is played out and the loop waits on its next poll. */
    settled,
  };
}

describe('Poller', () => {
  describe('when answers come', () => {
    it('should poll again at once with the id of the last message it has', async () => {
      const run = scripted([answer([1, 2]), answer([3]), answer([])]);
      run.poller.start();
      await run.settled;
      run.poller.stop();
      expect(run.sinces).toEqual([0, 2, 3, 3]);
      expect(run.delivered).toEqual([[1, 2], [3]]);
    });

    it('should drop messages at or below its cursor, so none shows twice', async () => {
      const run = scripted([answer([1, 2]), answer([2, 3]), answer([1])]);
      run.poller.start();
      await run.settled;
      run.poller.stop();
      expect(run.delivered).toEqual([[1, 2], [3]]);
      expect(run.state.cursor).toBe(3);
    });

    it('should pass on the online count of every answer', async () => {
      const run = scripted([answer([], 1), answer([], 2), answer([1], 3)]);
      run.poller.start();
      await run.settled;
      run.poller.stop();
      expect(run.online).toEqual([1, 2, 3]);
    });

    it('should hand on every field of each answer, with only the new messages', async () => {
      const people = { version: 4, names: ['Ann', 'Bob'], more: 0 };
      const typing = [{ nickname: 'Bob', client: 'bob-12345678' }];
      const run = scripted([{ ...answer([1, 2], 2), people, typing }, answer([2, 3])]);
      run.poller.start();
      await run.settled;
      run.poller.stop();
      expect(run.answers).toEqual([
        { ...answer([1, 2], 2), people, typing },
        { ...answer([3]), cursor: 3 },
      ]);
    });

    it('should send the extra query of each poll as it is just before that poll', async () => {
      let version = 0;
      const run = scripted([answer([1]), answer([2])], {
        query: () => ({ nickname: 'Ann', people: String(version++) }),
      });
      run.poller.start();
      await run.settled;
      run.poller.stop();
      expect(run.queries).toEqual([
        { nickname: 'Ann', people: '0' },
        { nickname: 'Ann', people: '1' },
        { nickname: 'Ann', people: '2' },
      ]);
    });
  });

  describe('when an answer was woken only for typing', () => {
    it('should poll again at once with the same cursor, without a backoff or a ping', async () => {
      const typing = [{ nickname: 'Bob', client: 'bob-12345678' }];
      const typingOnly: RecvAnswer = {
        messages: [],
        cursor: 1,
        online: 2,
        typing,
        typingOnly: true,
      };
      const run = scripted([answer([1]), typingOnly, typingOnly, answer([2])]);
      run.poller.start();
      await run.settled;
      run.poller.stop();
      expect(run.sinces).toEqual([0, 1, 1, 1, 2]);
      expect(run.pings()).toBe(0);
      expect(run.statuses).toEqual(['connected']);
      expect(run.answers.filter((a) => a.typingOnly)).toEqual([typingOnly, typingOnly]);
    });
  });

  describe('when the room was reset (its cursor is ahead of every message)', () => {
    it('should have the page reload the room, then poll on from what the page shows', async () => {
      const resets: number[] = [];
      const run = scripted([resetAnswer(2, 3), answer([5])], {
        cursor: 9,
        onReset: async (head) => {
          resets.push(head);
          return 4; // The reloaded history ends at 4: two more came since the answer.
        },
      });
      run.poller.start();
      await run.settled;
      run.poller.stop();
      expect(resets).toEqual([2]);
      expect(run.sinces).toEqual([9, 4, 5]);
      expect(run.delivered).toEqual([[5]]);
      expect(run.online).toEqual([3, 1]);
    });

    it('should poll on from the room head when the page has nothing to reload', async () => {
      const run = scripted([resetAnswer(0), answer([1, 2])], { cursor: 5 });
      run.poller.start();
      await run.settled;
      run.poller.stop();
      expect(run.sinces).toEqual([5, 0, 2]);
      // Ids below the old cursor are new messages now, not repeats.
      expect(run.delivered).toEqual([[1, 2]]);
    });

    it('should stay connected: a reset is not an error', async () => {
      const run = scripted([resetAnswer(0)], { cursor: 5, onReset: async () => undefined });
      run.poller.start();
      await run.settled;
      run.poller.stop();
      expect(run.statuses).toEqual(['connected']);
      expect(run.sinces).toEqual([5, 0]);
    });
  });

  describe('when a poll fails on the network or with 503', () => {
    it('should show reconnecting, ping, show connected, and poll with the same cursor', async () => {
      const run = scripted([
        answer([1]),
        new ApiError('down', 0, 'network_error'),
        new ApiError('busy', 503, 'overloaded'),
        answer([2]),
      ]);
      run.poller.start();
      await run.settled;
      run.poller.stop();
      expect(run.sinces).toEqual([0, 1, 1, 1, 2]);
      expect(run.delivered).toEqual([[1], [2]]);
      expect(run.statuses).toEqual([
        'connected',
        'reconnecting',
        'connected',
        'reconnecting',
        'connected',
      ]);
      expect(run.pings()).toBe(2);
    });
  });

  describe('when the server cannot be reached', () => {
    it('should probe under a second apart, not long-poll, and poll at once when a probe is answered', async () => {
      const events: string[] = [];
      let downPings = 3;
      let polls = 0;
      const back = new Promise<void>((resolve) => {
        const poller = new Poller({
          room: 'main',
          client: 'tab-12345678',
          cursor: () => 0,
          onAnswer: () => {},
          onStatus: (status) => events.push(status),
          backoff: { random: () => 0.99 },
          ping: async () => {
            events.push(`ping at ${Math.round(performance.now())}`);
            if (downPings-- > 0) throw new ApiError('down', 0, 'network_error');
          },
          recv: async () => {
            polls += 1;
            if (polls === 1) throw new ApiError('down', 0, 'network_error');
            poller.stop();
            resolve();
            return answer([]);
          },
        });
        poller.start();
      });
      await back;
      const pings = events.filter((event) => event.startsWith('ping'));
      expect(pings).toHaveLength(4);
      const times = pings.map((event) => Number(event.split(' at ')[1]));
      for (let i = 1; i < times.length; i += 1)
        expect(times[i]! - times[i - 1]!).toBeLessThanOrEqual(1_000 + 50);
      expect(polls).toBe(2);
      expect(events.filter((event) => !event.startsWith('ping'))).toEqual([
        'reconnecting',
        'connected',
      ]);
    });
  });

  describe('when a proxy says the server is down (502)', () => {
    it('should probe it as unreachable, not back off', async () => {
      let pings = 0;
      let polls = 0;
      await new Promise<void>((resolve) => {
        const poller = new Poller({
          room: 'main',
          client: 'tab-12345678',
          cursor: () => 0,
          onAnswer: () => {},
          onStatus: () => {},
          // A backoff would wait its whole ceiling: this one would time the test out.
          backoff: { random: () => 0.99, baseMs: 60_000 },
          ping: async () => {
            pings += 1;
            if (pings === 1) throw new ApiError('Bad Gateway', 502, 'http_502');
          },
          recv: async () => {
            polls += 1;
            if (polls === 1) throw new ApiError('Bad Gateway', 502, 'http_502');
            poller.stop();
            resolve();
            return answer([]);
          },
        });
        poller.start();
      });
      expect([pings, polls]).toEqual([2, 2]);
    });
  });

  describe('when the server refuses the poll (4xx)', () => {
    it('should stop and report why, without retrying', async () => {
      const refused = new ApiError('Field "room" must match …', 400, 'invalid_room');
      const statuses: [ConnectionStatus, ApiError | undefined][] = [];
      let polls = 0;
      const stopped = new Promise<void>((resolve) => {
        new Poller({
          room: 'Bad Room',
          client: 'tab-12345678',
          cursor: () => 0,
          onAnswer: () => {},
          onStatus: (status, error) => {
            statuses.push([status, error]);
            if (status === 'stopped') resolve();
          },
          recv: async () => {
            polls += 1;
            throw refused;
          },
        }).start();
      });
      await stopped;
      expect(polls).toBe(1);
      expect(statuses).toEqual([['stopped', refused]]);
    });
  });

  describe('repoll (a rename)', () => {
    it('should end the waiting poll and send the next at once with the new query, not as an error', async () => {
      const queries: Record<string, string>[] = [];
      const statuses: ConnectionStatus[] = [];
      let nickname = 'Ann';
      let polled: () => void = () => {};
      const waits = () =>
        new Promise<void>((resolve) => {
          polled = resolve;
        });
      let first = waits();
      const poller = new Poller({
        room: 'main',
        client: 'tab-12345678',
        cursor: () => 0,
        query: () => ({ nickname }),
        onAnswer: () => {},
        onStatus: (status) => statuses.push(status),
        ping: async () => {},
        recv: (_room, _since, _client, signal, query) => {
          queries.push(query ?? {});
          polled();
          return new Promise((_resolve, reject) =>
            signal?.addEventListener('abort', () =>
              reject(new ApiError('aborted', 0, 'network_error')),
            ),
          );
        },
      });
      poller.start();
      await first;
      first = waits();
      nickname = 'Robert';
      poller.repoll();
      await first;
      expect(queries).toEqual([{ nickname: 'Ann' }, { nickname: 'Robert' }]);
      expect(statuses).toEqual([]);
      poller.stop();
    });
  });
});
