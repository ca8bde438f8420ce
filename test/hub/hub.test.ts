/**
 * The hub on its own (server/hub/hub.ts): no socket, no server, and the
 * clock is a `ManualClock`, so a 25 s poll timeout takes no time.
 */

import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_NICKNAME } from '../../protocol/protocol.ts';
import { ClusterBus } from '../../server/bus/cluster-bus.ts';
import { LEAVE_DELAY_MS } from '../../server/hub/waiters.ts';
import { createOutageState } from '../../server/metrics/outage.ts';
import { servePresence } from '../../server/presence/cluster-presence.ts';
import { peopleOf } from '../../server/presence/people.ts';
import { LocalPresence } from '../../server/presence/presence.ts';
import { SharedPresence } from '../../server/presence/shared-presence.ts';
import { SteadyCount } from '../../server/presence/steady-count.ts';
import { MemoryStore } from '../../server/store/memory-store.ts';
import type { Message } from '../../server/store/store.ts';
import { ManualClock } from '../helpers/manual-clock.ts';
import { answered, createTestHub, nextTurn, stopTestHubs, TestReply } from './fixture.ts';

afterEach(() => {
  stopTestHubs();
});

const texts = (messages: readonly Message[]) => messages.map((m) => m.text);

describe('Hub.poll', () => {
  describe('when nothing comes', () => {
    it('answers empty at the poll timeout, not a millisecond before', async () => {
      const { hub, clock, post, waiting, ended } = createTestHub({ pollTimeoutMs: 25_000 });
      const hello = await post('hello');
      await nextTurn();
      const reply = await waiting(hello.id);
      expect(hub.waiting).toBe(1);
      await clock.advanceAsync(24_999);
      expect(reply.answered).toBe(false);
      await clock.advanceAsync(1);
      expect(reply.answer).toEqual({ messages: [], cursor: hello.id, online: 0 });
      expect(ended).toEqual([{ room: 'main', outcome: 'timeout', ms: 25_000 }]);
      expect(hub.waiting).toBe(0);
    });

    it('serves every waiting poll with one timer, each at its own deadline', async () => {
      const { clock, waiting } = createTestHub({ pollTimeoutMs: 25_000 });
      const first = await waiting(0);
      const timers = clock.pending;
      await clock.advanceAsync(10_000);
      const second = await waiting(0, 'other');
      expect(clock.pending).toBe(timers);
      await clock.advanceAsync(15_000);
      expect([first.answered, second.answered]).toEqual([true, false]);
      await clock.advanceAsync(10_000);
      expect(second.answer.messages).toEqual([]);
    });
  });

  describe('in a busy room (deliveryBatchMs)', () => {
    it('answers its polls at most every deliveryBatchMs, a catch-up with the batch', async () => {
      const { clock, post, waiting, counts } = createTestHub({ deliveryBatchMs: 10 });
      const first = await waiting(0);
      await post('one');
      await nextTurn();
      // A quiet room: at the end of the turn.
      expect(texts(first.answer.messages)).toEqual(['one']);
      const atHead = await waiting(1);
      await post('two');
      await nextTurn();
      expect(atHead.answered).toBe(false);
      // A poll behind the log while the batch waits waits for it, not a catch-up of its own.
      const behind = await waiting(0);
      expect(behind.answered).toBe(false);
      await post('three');
      await nextTurn();
      await clock.advanceAsync(9);
      expect([atHead.answered, behind.answered]).toEqual([false, false]);
      await clock.advanceAsync(1);
      expect(texts(atHead.answer.messages)).toEqual(['two', 'three']);
      expect(texts(behind.answer.messages)).toEqual(['one', 'two', 'three']);
      expect(counts.delivered).toBe(1 + 2 + 3);
    });
  });

  describe('in a quiet room (pollParkQuietMs)', () => {
    it('lets the transport park the polls that wait, and not those of a busy room', async () => {
      const { clock, post, waiting } = createTestHub({ pollParkQuietMs: 1_000 });
      // A room never answered with a message is quiet.
      const first = await waiting(0);
      expect(first.parked).toBe(true);
      await post('one');
      await nextTurn();
      expect(first.answered).toBe(true);
      // Its first message after a quiet while: the room is still quiet, and
      // a poll that comes right after it is about to wait long.
      const after = await waiting(1);
      expect(after.parked).toBe(true);
      await clock.advanceAsync(10);
      await post('two');
      await nextTurn();
      expect(after.answered).toBe(true);
      // Two messages 10 ms apart: busy, its polls are answered soon and keep what they hold.
      expect((await waiting(2)).parked).toBe(false);
      await clock.advanceAsync(999);
      expect((await waiting(2)).parked).toBe(false);
      await clock.advanceAsync(1);
      expect((await waiting(2)).parked).toBe(true);
      // A poll answered at once (behind the log) is not parked.
      const behind = await waiting(0);
      await nextTurn();
      expect([behind.answered, behind.parked]).toEqual([true, false]);
    });

    it('parks nothing when it is off', async () => {
      const { waiting } = createTestHub({ pollParkQuietMs: undefined });
      expect((await waiting(0)).parked).toBe(false);
      expect((await waiting(undefined, 'other')).parked).toBe(false);
    });
  });

  describe('when a message is posted while polls wait', () => {
    it('answers each poll with what came after its own cursor, in one answer per turn', async () => {
      const { hub, post, waiting, counts } = createTestHub();
      const early = await waiting(0);
      await post('one');
      await post('two');
      await nextTurn();
      expect(texts(early.answer.messages)).toEqual(['one', 'two']);
      expect(early.answer.cursor).toBe(2);

      const [atHead, alsoAtHead] = [await waiting(2), await waiting(2)];
      const nextOnly = await waiting(undefined); // the 2011 client: the next message
      const elsewhere = await waiting(0, 'other');
      await post('three');
      await nextTurn();
      expect(texts(atHead.answer.messages)).toEqual(['three']);
      expect(texts(nextOnly.answer.messages)).toEqual(['three']);
      // Serialised once: the polls at one cursor share the very same body.
      expect(alsoAtHead.body).toBe(atHead.body);
      expect(alsoAtHead.json).toBe(atHead.json);
      expect(elsewhere.answered).toBe(false);
      expect(hub.waiting).toBe(1);
      expect(counts.delivered).toBe(2 + 3);
    });
  });

  describe('when the log has what came after the cursor', () => {
    it('answers at the end of the turn, and polls at one cursor share one body', async () => {
      const { hub, post } = createTestHub();
      for (const text of ['one', 'two', 'three']) await post(text);
      await nextTurn();
      const [a, b, c] = [new TestReply(), new TestReply(), new TestReply()];
      const polls = [hub.poll('main', 1, undefined, a), hub.poll('main', 1, undefined, b)];
      polls.push(hub.poll('main', 2, undefined, c));
      expect(a.answered).toBe(false);
      await nextTurn();
      expect(await Promise.all(polls)).toEqual([undefined, undefined, undefined]);
      expect(texts(a.answer.messages)).toEqual(['two', 'three']);
      expect(b.body).toBe(a.body);
      expect(texts(c.answer.messages)).toEqual(['three']);
      expect(c.body).not.toBe(a.body);
    });

    it('reports a poll whose client left before the end of the turn as gone', async () => {
      const { hub, post, ended } = createTestHub();
      await post('one');
      await nextTurn();
      const reply = new TestReply();
      const poll = hub.poll('main', 0, undefined, reply);
      reply.hangUp();
      await nextTurn();
      await poll;
      expect(reply.answered).toBe(false);
      expect(ended).toEqual([{ room: 'main', outcome: 'gone', ms: 0 }]);
    });
  });

  describe('when the cursor is ahead of every message of the room', () => {
    it('answers at once with reset and the head', async () => {
      const { hub, post, ended } = createTestHub();
      await post('one');
      await post('two');
      const reply = new TestReply();
      expect(await hub.poll('main', 5, undefined, reply)).toBeUndefined();
      expect(reply.answer).toEqual({ messages: [], cursor: 2, online: 0, reset: true });
      expect(ended.map((e) => e.outcome)).toEqual(['reset']);
    });

    it('tells the waiting polls past the new head to reset when the room turns out reset', async () => {
      const { hub, post, waiting } = createTestHub();
      await post('one');
      await post('two');
      await nextTurn();
      const past = await waiting(2);
      hub.messages.reset('main', 1);
      expect(past.answer).toEqual({ messages: [], cursor: 1, online: 0, reset: true });
    });

    it('does not take a head read before the latest messages for a reset (the store watch)', async () => {
      // The heads the store had as the watch asked, answered only after a
      // message more came: the read is older than the log, not a reset.
      let release: () => void = () => {};
      class SlowHeads extends MemoryStore {
        override async heads(rooms: readonly string[]): Promise<Map<string, number>> {
          const seen = await super.heads(rooms);
          await new Promise<void>((resolve) => {
            release = resolve;
          });
          return seen;
        }
      }
      const { hub, clock, post, waiting } = createTestHub(
        { storePollMs: 1_000 },
        { store: new SlowHeads() },
      );
      await post('one');
      await post('two');
      await nextTurn();
      await clock.advanceAsync(1_000); // the watch asks for the heads: 2
      await post('three');
      await nextTurn();
      const atThree = await waiting(3);
      release();
      await nextTurn();
      await nextTurn();
      expect(atThree.answered).toBe(false);
      expect(hub.messages.lastId('main')).toBe(3);
    });
  });

  describe('when a client the room had not seen polls', () => {
    it('answers at once with the online count, then waits', async () => {
      const { hub, presence } = createTestHub();
      const first = new TestReply();
      await hub.poll('main', 0, 'client-one', first);
      // A poll with a client id and no `people=` gets the room's list too.
      expect(first.answer).toEqual({
        messages: [],
        cursor: 0,
        online: 1,
        people: peopleOf([DEFAULT_NICKNAME], 1),
      });
      const second = new TestReply();
      await hub.poll('main', 0, 'client-one', second);
      expect(second.answered).toBe(false);
      expect(presence.count('main')).toBe(1);
    });
  });

  describe('when the client goes away while its poll waits', () => {
    it('frees the waiter at once, and the client leaves the room a moment later', async () => {
      const { hub, clock, presence, ended } = createTestHub();
      await hub.poll('main', 0, 'client-one', new TestReply());
      const reply = new TestReply();
      await hub.poll('main', 0, 'client-one', reply);
      expect(hub.waiting).toBe(1);
      reply.hangUp();
      expect(hub.waiting).toBe(0);
      expect(ended.at(-1)).toEqual({ room: 'main', outcome: 'gone', ms: 0 });
      expect(reply.listenerCount('close')).toBe(0);
      expect(presence.count('main')).toBe(1);
      clock.advance(LEAVE_DELAY_MS);
      expect(presence.count('main')).toBe(0);
    });

    it('keeps the client counted when its next poll comes within the delay (another tab took over)', async () => {
      const { hub, clock, presence } = createTestHub();
      await hub.poll('main', 0, 'browser', new TestReply());
      await hub.poll('main', 0, 'watcher', new TestReply());
      const old = new TestReply();
      await hub.poll('main', 0, 'browser', old);
      old.hangUp();
      clock.advance(LEAVE_DELAY_MS / 2);
      await hub.poll('main', 0, 'browser', new TestReply());
      clock.advance(LEAVE_DELAY_MS);
      expect(presence.count('main')).toBe(2);
    });
  });

  describe('when the room’s online count changes', () => {
    it('wakes the polls shown another count within presenceNotifyMs', async () => {
      const { hub, clock, ended } = createTestHub({ presenceNotifyMs: 1_000 });
      await hub.poll('main', 0, 'client-one', new TestReply());
      const waiting = new TestReply();
      await hub.poll('main', 0, 'client-one', waiting);
      await hub.poll('main', 0, 'client-two', new TestReply()); // a join
      expect(waiting.answered).toBe(false);
      await clock.advanceAsync(1_000);
      expect(waiting.answer).toEqual({
        messages: [],
        cursor: 0,
        online: 2,
        people: peopleOf([DEFAULT_NICKNAME, DEFAULT_NICKNAME], 2),
      });
      expect(ended.at(-1)?.outcome).toBe('presence');
    });

    it("reads another process's leave at the first notice after it, not the second", async () => {
      // The shared view (Redis, or the cluster's primary) holds this
      // process's client and another process's; the other one leaves there.
      const clock = new ManualClock();
      const shared = new LocalPresence(60_000, () => clock.now());
      shared.touch('main', 'client-elsewhere');
      const view = new SharedPresence(
        async (batch) => {
          const rooms = servePresence(shared, batch);
          return new Map(rooms.map(([room, count, names]) => [room, { count, names }]));
        },
        { windowMs: 60_000, cacheMs: 1_000, batchMs: 20, clock },
      );
      const presence = new SteadyCount(view, {
        burst: 4,
        changeMs: 15_000,
        maxRooms: 100,
        now: () => clock.now(),
      });
      const { hub } = createTestHub({ presenceNotifyMs: 3_000 }, { presence, clock });
      await hub.poll('main', 0, 'client-here', new TestReply());
      await clock.advanceAsync(20); // the join's sync
      const waiting = new TestReply();
      await hub.poll('main', 0, 'client-here', waiting);
      expect(presence.count('main')).toBe(2);
      await clock.advanceAsync(1_000); // the cached count ages past its period
      shared.leave('main', 'client-elsewhere');
      // The notice at 3 s, and its sync 20 ms on: without a fresh count
      // first it reads the cached 2, and the leave shows at 6 s.
      await clock.advanceAsync(3_000 - 1_020 + 20);
      expect(waiting.answered).toBe(true);
      expect(waiting.answer.online).toBe(1);
      await view.close();
    });

    it('wakes them at the presence notice, and leaves polls shown the right count', async () => {
      const { hub, clock } = createTestHub({ presenceNotifyMs: 1_000 });
      await hub.poll('main', 0, 'client-one', new TestReply());
      const stale = new TestReply();
      await hub.poll('main', 0, 'client-one', stale);
      await hub.poll('main', 0, 'client-two', new TestReply());
      const current = new TestReply();
      await hub.poll('main', 0, 'client-two', current);
      await clock.advanceAsync(1_000);
      expect(stale.answer.online).toBe(2);
      expect(current.answered).toBe(false);
    });
  });

  describe('limits', () => {
    it('refuses a poll past maxWaiters', async () => {
      const { hub, waiting } = createTestHub({ maxWaiters: 1 });
      await waiting(0);
      expect(await hub.poll('main', 0, undefined, new TestReply())).toBe('overloaded');
    });

    it('reads addresses only near the per-address limit, and refuses an address past it', async () => {
      const { hub, post, waiting, counts } = createTestHub({ maxPollsPerAddress: 2 });
      await waiting(0, 'main', new TestReply('192.0.2.1'));
      await waiting(0, 'main', new TestReply('192.0.2.1'));
      expect(counts.addressReads).toBe(0);
      const third = new TestReply('192.0.2.1');
      expect(await hub.poll('main', 0, undefined, third)).toBe('address_limit');
      expect(counts.addressReads).toBe(3);
      await waiting(0, 'main', new TestReply('192.0.2.2'));
      expect(hub.waiting).toBe(3);
      await post('one');
      await nextTurn();
      expect(hub.waiting).toBe(0);
      const reads = counts.addressReads;
      await waiting(1, 'main', new TestReply('192.0.2.1'));
      expect(counts.addressReads).toBe(reads);
    });
  });

  describe('when the store does not answer', () => {
    it('gives up the read at STORE_TIMEOUT_MS, reports the outage, and waits', async () => {
      // Nothing answers: the store watch's look at the heads neither.
      const store = Object.assign(new MemoryStore(), {
        after: () => new Promise<Message[]>(() => {}),
        heads: () => new Promise<Map<string, number>>(() => {}),
      });
      const clock = new ManualClock();
      const storeState = createOutageState({ name: 'store', now: () => clock.now() });
      const { hub } = createTestHub({ storeTimeoutMs: 2_000 }, { store, storeState, clock });
      const reply = new TestReply();
      const poll = hub.poll('main', 0, undefined, reply);
      await clock.advanceAsync(1_999);
      expect(storeState.up).toBe(true);
      await clock.advanceAsync(1);
      expect(await poll).toBeUndefined();
      expect(storeState.up).toBe(false);
      expect(hub.waiting).toBe(1);
      expect(reply.answered).toBe(false);
    });
  });

  describe('shutdown', () => {
    it('answers every waiting poll empty, closing its connection, and takes no more', async () => {
      const { hub, post, waiting, ended } = createTestHub();
      await post('one');
      await nextTurn();
      const [a, b] = [await waiting(1), await waiting(0, 'other')];
      hub.shutdown();
      expect(a.answer).toEqual({ messages: [], cursor: 1, online: 0 });
      expect(b.answer).toEqual({ messages: [], cursor: 0, online: 0 });
      expect([a.last, b.last]).toEqual([true, true]);
      expect(ended.map((e) => e.outcome)).toEqual(['shutdown', 'shutdown']);
      expect(hub.closed).toBe(true);
      expect(await hub.poll('main', 1, undefined, new TestReply())).toBe('closed');
    });
  });
});

/** A store that counts the reads after a cursor. */
class CountingStore extends MemoryStore {
  reads = 0;
  override after(room: string, since: number, limit: number): Promise<Message[]> {
    this.reads += 1;
    return super.after(room, since, limit);
  }
}

/** A cluster worker's IPC channel whose primary relays nothing: the other worker died before it published. */
const silentPrimary = () =>
  Object.assign(new EventEmitter(), { connected: true, send: () => true });

/** The cluster bus, as if it lost live processes' messages (as Redis may). */
class LossyBus extends ClusterBus {
  override readonly reliable = false;
}

describe('Hub on a bus', () => {
  it("that is reliable (the cluster's IPC), answers a poll at the head from its log, and finds a dead writer's message with the store watch", async () => {
    const store = new CountingStore();
    const clock = new ManualClock();
    const bus = new ClusterBus(silentPrimary());
    const { post, waiting } = createTestHub({ storePollMs: 1_000 }, { store, clock, bus });
    const first = await post('one');
    await nextTurn();
    const reads = store.reads;
    const reply = await waiting(first.id);
    expect(store.reads).toBe(reads);
    // Another worker stores a message and dies before it publishes it.
    await store.append({ room: 'main', nickname: 'n', text: 'lost' });
    await clock.advanceAsync(1_000);
    expect(texts((await answered(reply)).answer.messages)).toEqual(['lost']);
  });

  it("that may lose a live process's message, asks the store for every poll at the head", async () => {
    const store = new CountingStore();
    const bus = new LossyBus(silentPrimary());
    const { post, waiting } = createTestHub({}, { store, bus });
    const first = await post('one');
    await nextTurn();
    const reads = store.reads;
    await waiting(first.id);
    expect(store.reads).toBe(reads + 1);
  });
});

describe('Hub.post', () => {
  it('reaches the polls of another hub on the same store through its store watch', async () => {
    const store = new MemoryStore();
    const clock = new ManualClock();
    const a = createTestHub({ storePollMs: 1_000 }, { store, clock });
    const b = createTestHub({ storePollMs: 1_000 }, { store, clock });
    const reply = await b.waiting(0);
    await a.post('from a');
    await nextTurn();
    expect(reply.answered).toBe(false);
    await clock.advanceAsync(1_000); // the watch looks
    expect(texts((await answered(reply)).answer.messages)).toEqual(['from a']);
  });
});
