/**
 * How the MongoDB store reads a room around missing ids and voids
 * (server/store/mongodb/gaps.ts), on an in-memory room that keeps the one
 * rule the store relies on from MongoDB: one document per id (the unique
 * `{room, id}` index). Documents can be made invisible for a while, as a
 * write is to `readConcern: 'majority'` readers until a majority has it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type GapDoc, readAfter, readBefore, scan } from '../../../server/store/mongodb/gaps.ts';
import { ManualClock } from '../../helpers/manual-clock.ts';

interface Doc extends GapDoc {
  text?: string;
}

const GRACE = 10_000;

/** A room: documents by id, a clock, and a record of what readers asked. */
class Room {
  readonly docs = new Map<number, Doc>();
  readonly hidden = new Set<number>();
  readonly claims: number[][] = [];
  reads = 0;
  readonly time = new ManualClock(1_000_000);

  /** A message (or void) stamped `age` ms before now. First write of an id wins. */
  put(id: number, age = 0, kind: 'message' | 'void' = 'message'): boolean {
    if (this.docs.has(id)) return false;
    const time = new Date(this.time.now() - age);
    this.docs.set(id, kind === 'void' ? { id, time, void: true } : { id, time, text: `m${id}` });
    return true;
  }

  readonly source = {
    from: async (from: number, count: number) => {
      this.reads++;
      return this.#visible()
        .filter((d) => d.id >= from)
        .slice(0, count);
    },
    below: async (below: number, count: number) => {
      this.reads++;
      return this.#visible()
        .filter((d) => d.id < below)
        .reverse()
        .slice(0, count);
    },
    claim: async (ids: number[]) => {
      this.claims.push(ids);
      for (const id of ids) this.put(id, 0, 'void');
      this.onClaim?.(ids);
    },
  };

  onClaim: ((ids: number[]) => void) | undefined;

  readonly clock = { graceMs: GRACE, now: () => this.time.now() };

  #visible(): Doc[] {
    return [...this.docs.values()]
      .filter((d) => !this.hidden.has(d.id))
      .sort((a, b) => a.id - b.id);
  }
}

const ids = (docs: GapDoc[]) => docs.map((d) => d.id);

describe('readAfter (MongoStore.after)', () => {
  describe('when ids follow on', () => {
    it('gives the messages after the cursor, at most limit, and says why it stopped', async () => {
      const room = new Room();
      for (let id = 1; id <= 5; id++) room.put(id);
      const full = await readAfter(room.source, 0, 3, room.clock);
      expect({ ids: ids(full.messages), end: full.end }).toEqual({ ids: [1, 2, 3], end: 'limit' });
      const rest = await readAfter(room.source, 3, 3, room.clock);
      expect({ ids: ids(rest.messages), end: rest.end }).toEqual({ ids: [4, 5], end: 'head' });
      const none = await readAfter(room.source, 5, 3, room.clock);
      expect({ ids: ids(none.messages), end: none.end }).toEqual({ ids: [], end: 'head' });
    });
  });

  describe('when voids sit among the messages', () => {
    it('does not count them against limit: a full page of messages, read past the voids', async () => {
      const room = new Room();
      for (let id = 1; id <= 12; id++)
        room.put(id, 0, [2, 3, 4, 7].includes(id) ? 'void' : 'message');
      const page = await readAfter(room.source, 0, 5, room.clock);
      expect(ids(page.messages)).toEqual([1, 5, 6, 8, 9]);
      expect(page.end).toBe('limit');
    });

    it('reads past a run of voids longer than a page to the message after it', async () => {
      const room = new Room();
      for (let id = 1; id <= 20; id++) room.put(id, 0, 'void');
      room.put(21);
      const page = await readAfter(room.source, 0, 5, room.clock);
      expect({ ids: ids(page.messages), end: page.end }).toEqual({ ids: [21], end: 'head' });
      expect(room.reads).toBeLessThanOrEqual(5); // 5 + 5 + 5 + 5 voids, then the message
    });

    it('stops at the head when only voids follow', async () => {
      const room = new Room();
      room.put(1);
      room.put(2, 0, 'void');
      const page = await readAfter(room.source, 0, 1, room.clock);
      expect({ ids: ids(page.messages), end: page.end }).toEqual({ ids: [1], end: 'limit' });
      const next = await readAfter(room.source, 1, 1, room.clock);
      expect({ ids: ids(next.messages), end: next.end }).toEqual({ ids: [], end: 'head' });
    });
  });

  describe('when an id is missing and the message after it is within the grace', () => {
    it('stops before the gap and claims nothing', async () => {
      const room = new Room();
      room.put(1);
      room.put(2);
      room.put(4, GRACE - 1);
      const page = await readAfter(room.source, 0, 10, room.clock);
      expect({ ids: ids(page.messages), end: page.end }).toEqual({ ids: [1, 2], end: 'gap' });
      expect(room.claims).toEqual([]);
    });

    it('gives the rest once the missing message lands', async () => {
      const room = new Room();
      room.put(1);
      room.put(3, 100);
      expect((await readAfter(room.source, 1, 10, room.clock)).end).toBe('gap');
      room.put(2);
      const page = await readAfter(room.source, 1, 10, room.clock);
      expect({ ids: ids(page.messages), end: page.end }).toEqual({ ids: [2, 3], end: 'head' });
    });
  });

  describe('when the message after a missing id is older than the grace', () => {
    it('claims every missing id with a void and reads on past them', async () => {
      const room = new Room();
      room.put(1);
      room.put(5, GRACE);
      room.put(6);
      const page = await readAfter(room.source, 0, 10, room.clock);
      expect({ ids: ids(page.messages), end: page.end }).toEqual({ ids: [1, 5, 6], end: 'head' });
      expect(room.claims).toEqual([[2, 3, 4]]);
    });

    it('gives the real message when it won the id just before the claim', async () => {
      const room = new Room();
      room.put(1);
      room.put(3, GRACE);
      // The late insert lands between the read and the claim: the claim loses.
      room.source.claim = async (claimed) => {
        room.claims.push(claimed);
        room.put(2);
        for (const id of claimed) room.put(id, 0, 'void');
      };
      const page = await readAfter(room.source, 0, 10, room.clock);
      expect(page.messages.map((m) => m.text)).toEqual(['m1', 'm2', 'm3']);
    });

    it('holds, without claiming again, when neither the claim nor the message is readable yet', async () => {
      const room = new Room();
      room.put(1);
      room.put(3, GRACE);
      room.onClaim = (claimed) => {
        for (const id of claimed) room.hidden.add(id); // not yet on a majority
      };
      const page = await readAfter(room.source, 0, 10, room.clock);
      expect({ ids: ids(page.messages), end: page.end }).toEqual({ ids: [1], end: 'gap' });
      expect(room.claims).toEqual([[2]]);
    });
  });
});

describe('readBefore (MongoStore.before)', () => {
  it('gives the latest page below an id, oldest first, voids not counted', async () => {
    const room = new Room();
    for (let id = 1; id <= 10; id++) room.put(id, 0, [7, 8].includes(id) ? 'void' : 'message');
    expect(ids(await readBefore(room.source, 11, 3, room.clock))).toEqual([6, 9, 10]);
    expect(ids(await readBefore(room.source, 6, 10, room.clock))).toEqual([1, 2, 3, 4, 5]);
    expect(ids(await readBefore(room.source, 1, 10, room.clock))).toEqual([]);
  });

  it("holds back the page's newest end behind a missing id within the grace", async () => {
    const room = new Room();
    for (const id of [1, 2, 3, 5, 6]) room.put(id, 1_000);
    expect(ids(await readBefore(room.source, Number.MAX_SAFE_INTEGER, 10, room.clock))).toEqual([
      1, 2, 3,
    ]);
    expect(room.claims).toEqual([]);
  });

  it('claims a missing id inside the page once the grace is over', async () => {
    const room = new Room();
    for (const id of [1, 2, 3, 5, 6]) room.put(id, GRACE);
    expect(ids(await readBefore(room.source, Number.MAX_SAFE_INTEGER, 10, room.clock))).toEqual([
      1, 2, 3, 5, 6,
    ]);
    expect(room.claims).toEqual([[4]]);
  });
});

describe('scan', () => {
  it('counts the grace from the time of the message after the gap', () => {
    const doc = (id: number, time: number): GapDoc => ({ id, time: new Date(time) });
    const docs = [doc(1, 0), doc(3, 50_000)];
    expect(scan(docs, 0, 10, 50_000 + GRACE - 1, GRACE).stop).toEqual({ kind: 'held', missing: 2 });
    expect(scan(docs, 0, 10, 50_000 + GRACE, GRACE).stop).toEqual({
      kind: 'overdue',
      missing: [2],
    });
  });
});

/**
 * Writers take ids in order and insert at any later time, or never (they
 * died); readers poll at any time with their cursor. Whatever the timing,
 * and whatever the grace, a reader's messages are exactly the stored ones up
 * to its cursor, each once, in order: an insert that comes after a claim of
 * its id fails, so its send was never acknowledged.
 */
describe('any interleaving of writers and readers', () => {
  it('lets no reader skip or repeat a stored message', async () => {
    const step = fc.oneof(
      { arbitrary: fc.record({ kind: fc.constant('take' as const) }), weight: 3 },
      { arbitrary: fc.record({ kind: fc.constant('insert' as const), pick: fc.nat() }), weight: 3 },
      {
        arbitrary: fc.record({
          kind: fc.constant('read' as const),
          reader: fc.nat({ max: 1 }),
          limit: fc.integer({ min: 1, max: 4 }),
        }),
        weight: 3,
      },
      {
        arbitrary: fc.record({
          kind: fc.constant('tick' as const),
          ms: fc.constantFrom(1, GRACE / 2, GRACE - 1, GRACE, 2 * GRACE),
        }),
        weight: 2,
      },
    );
    type Step = typeof step extends fc.Arbitrary<infer S> ? S : never;
    // The interleaving that skipped a message when readers gave a late id up without claiming it.
    const skippedBeforeClaims: Step[] = [
      { kind: 'take' },
      { kind: 'take' },
      { kind: 'insert', pick: 1 },
      { kind: 'tick', ms: GRACE },
      { kind: 'read', reader: 0, limit: 1 },
      { kind: 'insert', pick: 0 },
    ];
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const room = new Room();
        let lastId = 0;
        const pending: { id: number; takenAt: number }[] = [];
        const acknowledged = new Set<number>();
        const readers = [0, 1].map(() => ({ cursor: 0, got: [] as number[] }));
        const read = async (r: (typeof readers)[number], limit: number) => {
          const page = await readAfter(room.source, r.cursor, limit, room.clock);
          for (const m of page.messages) r.got.push(m.id);
          const last = page.messages.at(-1);
          if (last) r.cursor = last.id;
        };
        for (const s of steps) {
          if (s.kind === 'take') pending.push({ id: ++lastId, takenAt: room.time.now() });
          if (s.kind === 'insert' && pending.length > 0) {
            const [w] = pending.splice(s.pick % pending.length, 1);
            // The writer stamps its message when it took the id.
            const age = room.time.now() - w!.takenAt;
            if (room.put(w!.id, age)) acknowledged.add(w!.id);
          }
          if (s.kind === 'read') await read(readers[s.reader]!, s.limit);
          if (s.kind === 'tick') room.time.advance(s.ms);
        }
        for (const r of readers) {
          const upToCursor = [...acknowledged].filter((id) => id <= r.cursor).sort((a, b) => a - b);
          expect(r.got).toEqual(upToCursor);
        }
      }),
      { numRuns: 1_000, examples: [[skippedBeforeClaims]] },
    );
  });
});
