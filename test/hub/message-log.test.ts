/**
 * The message log on its own: no socket, no server. What it promises every
 * cursor (docs/design.md, "Cursors and dense ids"): consecutive ids, no
 * skips, no doubles, gaps held back until filled or given up, and memory
 * that stays bounded whatever room names strangers invent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../server/hub/clock.ts';
import {
  type MessageLog as Log,
  MessageLog,
  type MessageLogOptions,
} from '../../server/hub/message-log.ts';
import { StoreReads } from '../../server/hub/store-reads.ts';
import { MemoryStore } from '../../server/store/memory-store.ts';
import type { MessageStore } from '../../server/store/store.ts';
import { ManualClock } from '../helpers/manual-clock.ts';
import { message } from '../helpers/message.ts';
import { until } from '../helpers/wait.ts';

let log: Log | undefined;
afterEach(() => log?.close());

type LogOptions = Partial<Omit<MessageLogOptions, 'reads' | 'clock'>> & {
  store?: MessageStore;
  /** The log's time (a `ManualClock`'s `now`); its timers stay the process's. */
  now?: () => number;
  /** The log's time and its timers. */
  clock?: ManualClock;
};

function createLog({ store = new MemoryStore(), now, clock, ...options }: LogOptions = {}) {
  log = new MessageLog({
    reads: new StoreReads(store, { timeoutMs: 1_000 }),
    clock: clock ?? (now ? { ...systemClock, now } : systemClock),
    trustRing: true,
    maxRooms: 100,
    roomIdleMs: 60_000,
    ...options,
  });
  const advances: Array<{ room: string; ids: number[] }> = [];
  log.onAdvance((room, ring, from) =>
    advances.push({ room, ids: ring.slice(from).map((m) => m.id) }),
  );
  /** Resolves after the log's next delivery turn. */
  const flushed = () => new Promise((resolve) => setImmediate(resolve));
  return { log, advances, flushed };
}

/** A store with `n` messages in `room`, as another process would have written them. */
async function storeWith(n: number, room = 'main'): Promise<MemoryStore> {
  const store = new MemoryStore();
  for (let i = 1; i <= n; i += 1) await store.append({ room, nickname: 'n', text: `m${i}` });
  return store;
}

describe('MessageLog', () => {
  describe('accept', () => {
    it('hands messages accepted in one turn to the listeners together, once per room', async () => {
      const { log, advances, flushed } = createLog();
      log.accept(message(1));
      log.accept(message(2));
      log.accept(message(1, 'dev'));
      await flushed();
      expect(advances).toEqual([
        { room: 'main', ids: [1, 2] },
        { room: 'dev', ids: [1] },
      ]);
    });

    it('holds a message ahead of a gap back until the smaller id arrives', async () => {
      const { log, advances, flushed } = createLog();
      log.accept(message(1));
      await flushed();
      log.accept(message(3));
      await flushed();
      expect(log.lastId('main')).toBe(1);
      log.accept(message(2));
      await flushed();
      expect(advances.at(-1)).toEqual({ room: 'main', ids: [2, 3] });
      expect(log.lastId('main')).toBe(3);
    });

    it('drops a message it already has (a bus echo, a repeated key)', async () => {
      const { log, advances, flushed } = createLog();
      log.accept(message(1));
      log.accept(message(2));
      await flushed();
      log.accept(message(2));
      log.accept(message(1));
      await flushed();
      expect(advances).toEqual([{ room: 'main', ids: [1, 2] }]);
    });
  });

  describe('batchMs', () => {
    it('tells a busy room at most every batchMs, with all that came since, and a quiet one at once', async () => {
      const clock = new ManualClock();
      const { log, advances, flushed } = createLog({ batchMs: 10, clock });
      log.accept(message(1));
      await flushed();
      expect(advances).toEqual([{ room: 'main', ids: [1] }]);
      await clock.advanceAsync(4);
      log.accept(message(2));
      await flushed();
      log.accept(message(3));
      await flushed();
      expect(log.batching('main')).toBe(true);
      // Another room does not wait for this one's batch.
      log.accept(message(1, 'dev'));
      await flushed();
      expect(advances.at(-1)).toEqual({ room: 'dev', ids: [1] });
      await clock.advanceAsync(5);
      expect(advances).toHaveLength(2);
      await clock.advanceAsync(1);
      expect(advances.at(-1)).toEqual({ room: 'main', ids: [2, 3] });
      expect(log.batching('main')).toBe(false);
      // Quiet for batchMs since its last telling: at the end of the turn again.
      await clock.advanceAsync(10);
      log.accept(message(4));
      await flushed();
      expect(advances.at(-1)).toEqual({ room: 'main', ids: [4] });
    });

    /** A log with a 10 ms batch on a `ManualClock`, that has just told its listeners of message 1. */
    async function justTold() {
      const clock = new ManualClock();
      const created = createLog({ batchMs: 10, clock });
      created.log.accept(message(1));
      await created.flushed();
      return { clock, ...created };
    }

    it('waits no longer than batchMs when the clock is set back', async () => {
      const { clock, log, advances, flushed } = await justTold();
      clock.setBack(3_600_000);
      log.accept(message(2));
      await flushed();
      await clock.advanceAsync(10);
      expect(advances.at(-1)).toEqual({ room: 'main', ids: [2] });
    });

    it('drops a waiting batch with its room', async () => {
      const { clock, log, advances, flushed } = await justTold();
      const timers = clock.pending;
      log.accept(message(2));
      await flushed();
      expect(clock.pending).toBe(timers + 1);
      log.reset('main', 0);
      expect(clock.pending).toBe(timers);
      await clock.advanceAsync(10);
      expect(advances).toEqual([{ room: 'main', ids: [1] }]);
    });
  });

  describe('catchUp', () => {
    it('answers from the ring what comes after a cursor inside it', () => {
      const { log } = createLog();
      for (let id = 1; id <= 5; id += 1) log.accept(message(id));
      expect(log.catchUp('main', 2)?.map((m) => m.id)).toEqual([3, 4, 5]);
    });

    it('answers "nothing yet" at the head only when the ring can be trusted', () => {
      const trusted = createLog().log;
      trusted.accept(message(1));
      expect(trusted.catchUp('main', 1)).toEqual([]);
      trusted.close();
      const untrusted = createLog({ trustRing: false }).log;
      untrusted.accept(message(1));
      expect(untrusted.catchUp('main', 1)).toBeUndefined();
    });

    it('sends a cursor before the ring, past the head, or in an unknown room to the store', () => {
      const { log } = createLog({ ringSize: 3 });
      for (let id = 1; id <= 5; id += 1) log.accept(message(id));
      expect(log.catchUp('main', 1)).toBeUndefined(); // the ring holds 3..5
      expect(log.catchUp('main', 9)).toBeUndefined();
      expect(log.catchUp('elsewhere', 0)).toBeUndefined();
    });
  });

  describe('seed', () => {
    it('starts an unknown room at the run of consecutive ids at the end of a store read', () => {
      const { log } = createLog();
      log.seed('main', [message(1), message(2), message(4), message(5)]);
      expect(log.catchUp('main', 3)?.map((m) => m.id)).toEqual([4, 5]);
      expect(log.catchUp('main', 2)).toBeUndefined();
    });
  });

  describe('when the bus never fills a gap', () => {
    it('reads the gap from the store', async () => {
      const store = await storeWith(3);
      const { log, advances } = createLog({ store, gapWaitMs: 5 });
      log.accept((await store.after('main', 0, 1))[0]!);
      log.accept((await store.after('main', 2, 1))[0]!);
      // The listeners hear of it at the end of the turn, after lastId moved: wait for them.
      const ids = () => advances.flatMap((a) => a.ids);
      await until(() => ids().length >= 3, 'the listeners to hear of id 3');
      expect(ids()).toEqual([1, 2, 3]);
    });

    it('gives a gap up at once when the store commits in id order and has nothing there', async () => {
      const store = await storeWith(1); // id 2 was taken by a write that failed
      const { log } = createLog({ store, gapWaitMs: 5 });
      log.accept(message(1));
      log.accept(message(3));
      await until(() => log.lastId('main') === 3, 'the log to reach id 3');
      expect(log.catchUp('main', 1)).toBeUndefined(); // before the restarted ring: the store answers
    });

    it("waits for the store's gapGraceMs before giving a gap up", async () => {
      const clock = new ManualClock(0);
      let reads = 0;
      const base = await storeWith(1);
      const store: MessageStore = Object.assign(base, {
        gapGraceMs: 10_000,
        after: (room: string, since: number, limit: number) => {
          reads += 1;
          return MemoryStore.prototype.after.call(base, room, since, limit);
        },
      });
      const { log } = createLog({ store, gapWaitMs: 1, now: () => clock.now() });
      log.accept(message(1));
      log.accept(message(3));
      // Several gap reads go by: within the grace, id 2 may still appear.
      await until(() => reads >= 3, 'three gap reads');
      expect(log.lastId('main')).toBe(1);
      clock.advance(10_000);
      await until(() => log.lastId('main') === 3, 'the log to reach id 3');
    });
  });

  describe('memory', () => {
    it('keeps at most maxRooms rooms, dropping the least recently used first', () => {
      const { log } = createLog({ maxRooms: 3 });
      for (const room of ['a', 'b', 'c']) log.accept(message(1, room));
      log.catchUp('a', 0); // a is used again: b is now the oldest
      log.accept(message(1, 'd'));
      expect(log.rooms).toBe(3);
      expect(log.roomNames().sort()).toEqual(['a', 'c', 'd']);
    });

    it('drops rooms idle for roomIdleMs unless polls watch them', () => {
      const clock = new ManualClock(0);
      const watched = new Set(['kept']);
      const { log } = createLog({
        roomIdleMs: 1_000,
        now: () => clock.now(),
        isWatched: (room) => watched.has(room),
      });
      log.accept(message(1, 'idle'));
      log.accept(message(1, 'kept'));
      clock.advance(500);
      log.accept(message(1, 'recent'));
      clock.advance(700);
      log.dropIdle();
      expect(log.roomNames().sort()).toEqual(['kept', 'recent']);
    });

    it("holds 50,000 strangers' rooms as at most maxRooms", () => {
      const { log } = createLog({ maxRooms: 1_000 });
      for (let i = 0; i < 50_000; i += 1) log.accept(message(1, `room-${i}`));
      expect(log.rooms).toBe(1_000);
    });
  });

  describe('reset', () => {
    it('forgets the room and tells the listeners its new head', () => {
      const { log } = createLog();
      const resets: Array<[string, number]> = [];
      log.onReset((room, head) => resets.push([room, head]));
      log.accept(message(1));
      log.accept(message(2));
      log.reset('main', 0);
      expect(log.lastId('main')).toBeUndefined();
      expect(resets).toEqual([['main', 0]]);
      log.accept(message(1));
      expect(log.lastId('main')).toBe(1);
    });
  });
});
