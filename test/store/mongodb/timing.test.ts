/**
 * The MongoDB store's grace arithmetic (server/store/mongodb/timing.ts): the
 * readers' grace must exceed the latest a writer's insert can land, plus
 * clock skew, and the client and store must really run with those numbers.
 */
import fc from 'fast-check';
import { MongoClient } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { chatClientOptions, createMongoClient } from '../../../server/store/mongodb/client.ts';
import { MongoStore } from '../../../server/store/mongodb/store.ts';
import {
  checkTiming,
  defaultTiming,
  gapGraceMs,
  MIN_HEADROOM_MS,
  type MongoTiming,
  planInsert,
  writerWorstCaseMs,
} from '../../../server/store/mongodb/timing.ts';

describe('MongoDB timing', () => {
  describe('with the defaults', () => {
    it("bounds a writer's insert at 6 s after its append started", () => {
      expect(writerWorstCaseMs(defaultTiming)).toBe(1_500 + 1_000 + 1_000 + 1_000 + 1_500);
    });

    it("keeps the readers' grace clearly above that plus clock skew", () => {
      const margin =
        defaultTiming.graceMs - writerWorstCaseMs(defaultTiming) - defaultTiming.clockSkewMs;
      expect(margin).toBeGreaterThanOrEqual(MIN_HEADROOM_MS);
      expect(margin).toBe(2_000);
      expect(() => checkTiming(defaultTiming)).not.toThrow();
    });

    it('tells the message log to wait 12 s for a missing id', () => {
      expect(gapGraceMs(defaultTiming)).toBe(12_000);
    });
  });

  describe('when any wait of an append grows', () => {
    const terms = [
      'sendByMs',
      'serverSelectionTimeoutMS',
      'waitQueueTimeoutMS',
      'deliveryMs',
      'insertMaxTimeMs',
    ] as const;

    it("adds exactly that much to the writer's worst case", () => {
      fc.assert(
        fc.property(
          fc.constantFrom(...terms),
          fc.integer({ min: 1, max: 60_000 }),
          (term, more) => {
            const grown = { ...defaultTiming, [term]: defaultTiming[term] + more };
            expect(writerWorstCaseMs(grown)).toBe(writerWorstCaseMs(defaultTiming) + more);
          },
        ),
      );
    });

    it('refuses the timing once the grace no longer clearly exceeds it', () => {
      for (const term of terms) {
        const grown = { ...defaultTiming, [term]: defaultTiming[term] + 1_001 };
        expect(() => checkTiming(grown)).toThrow(/graceMs 10000 must be at least 10001/);
      }
      expect(() => checkTiming({ ...defaultTiming, clockSkewMs: 3_001 })).toThrow(/graceMs/);
    });

    it('refuses a zero wait, which the driver reads as "no limit"', () => {
      expect(() => checkTiming({ ...defaultTiming, waitQueueTimeoutMS: 0 })).toThrow(
        /waitQueueTimeoutMS must be a positive integer/,
      );
    });
  });

  describe('on a timeline of one missing id', () => {
    // Writer A starts its append at real time 0 and takes id 7; writer B
    // takes id 8 after that (the counter is atomic) and stamps it with its
    // own clock; a reader claims 7 once id 8 looks `graceMs` old on the
    // reader's clock. Clocks are off by at most half the skew allowance
    // each, so any two differ by at most the allowance.
    it("never lets a reader claim an id before its writer's insert can no longer land", () => {
      const accepted = fc
        .record({
          sendByMs: fc.integer({ min: 1, max: 5_000 }),
          serverSelectionTimeoutMS: fc.integer({ min: 1, max: 5_000 }),
          waitQueueTimeoutMS: fc.integer({ min: 1, max: 5_000 }),
          deliveryMs: fc.integer({ min: 1, max: 5_000 }),
          insertMaxTimeMs: fc.integer({ min: 1, max: 5_000 }),
          clockSkewMs: fc.integer({ min: 2, max: 5_000 }),
          extra: fc.integer({ min: 0, max: 5_000 }),
        })
        .map(({ extra, ...terms }) => {
          const timing: MongoTiming = { ...defaultTiming, ...terms };
          const graceMs = writerWorstCaseMs(timing) + timing.clockSkewMs + MIN_HEADROOM_MS + extra;
          return checkTiming({ ...timing, graceMs });
        });
      const share = fc.double({ min: 0, max: 1, noNaN: true });
      const offset = fc.double({ min: -0.5, max: 0.5, noNaN: true });
      fc.assert(
        fc.property(
          accepted,
          fc.tuple(share, share, share, share, share),
          fc.tuple(offset, offset),
          fc.integer({ min: 0, max: 100_000 }),
          (t, [send, select, checkout, deliver, run], [offB, offR], stampedAt) => {
            // The latest A's insert is applied (real ms): each wait at most its bound.
            const landsBy =
              send * t.sendByMs +
              select * t.serverSelectionTimeoutMS +
              checkout * t.waitQueueTimeoutMS +
              deliver * t.deliveryMs +
              run * t.insertMaxTimeMs;
            const stampOf8 = stampedAt + offB * t.clockSkewMs; // on B's clock
            const claimAt = stampOf8 + t.graceMs - offR * t.clockSkewMs; // real time
            expect(claimAt - landsBy).toBeGreaterThanOrEqual(MIN_HEADROOM_MS);
          },
        ),
      );
    });
  });

  describe('planInsert', () => {
    it('sends the insert up to sendByMs after the append started, and a void after', () => {
      expect(planInsert(1_000, 1_000, defaultTiming)).toBe('insert');
      expect(planInsert(1_000, 1_000 + defaultTiming.sendByMs, defaultTiming)).toBe('insert');
      expect(planInsert(1_000, 1_001 + defaultTiming.sendByMs, defaultTiming)).toBe('void');
    });
  });

  describe('the client the chat builds', () => {
    it('runs with the timeouts of the arithmetic and one attempt per write', () => {
      const { options } = createMongoClient('mongodb://10.0.0.5:27017/chat');
      expect(options).toMatchObject({
        serverSelectionTimeoutMS: defaultTiming.serverSelectionTimeoutMS,
        waitQueueTimeoutMS: defaultTiming.waitQueueTimeoutMS,
        connectTimeoutMS: defaultTiming.connectTimeoutMS,
        socketTimeoutMS: defaultTiming.socketTimeoutMS,
        retryWrites: false,
      });
      expect(chatClientOptions()).toMatchObject({ retryWrites: false });
    });

    it('keeps them when the URL asks for longer waits or retried writes', () => {
      const { options } = createMongoClient(
        'mongodb://10.0.0.5:27017/chat?serverSelectionTimeoutMS=30000&waitQueueTimeoutMS=0&retryWrites=true',
      );
      expect(options.serverSelectionTimeoutMS).toBe(defaultTiming.serverSelectionTimeoutMS);
      expect(options.waitQueueTimeoutMS).toBe(defaultTiming.waitQueueTimeoutMS);
      expect(options.retryWrites).toBe(false);
    });
  });

  describe('the store', () => {
    it('reports its gap grace to the message log', () => {
      const store = new MongoStore(createMongoClient('mongodb://10.0.0.5:27017/chat'));
      expect(store.gapGraceMs).toBe(12_000);
    });

    it("checks the arithmetic against the client's own timeouts", () => {
      const slow = createMongoClient('mongodb://10.0.0.5:27017/chat', {
        serverSelectionTimeoutMS: 30_000,
      });
      expect(() => new MongoStore(slow)).toThrow(/graceMs 10000 must be at least/);
      const longerGrace = new MongoStore(slow, { timing: { graceMs: 40_000 } });
      expect(longerGrace.gapGraceMs).toBe(42_000);
    });

    it('refuses a client with the driver defaults: retried writes, no checkout limit', () => {
      expect(() => new MongoStore(new MongoClient('mongodb://10.0.0.5:27017/chat'))).toThrow(
        /retryWrites: false/,
      );
      const noCheckoutLimit = new MongoClient('mongodb://10.0.0.5:27017/chat', {
        ...chatClientOptions(),
        waitQueueTimeoutMS: 0,
      });
      expect(() => new MongoStore(noCheckoutLimit)).toThrow(/waitQueueTimeoutMS/);
    });
  });
});
