/**
 * The MongoDB store through the real driver, against a stand-in server
 * (mongodb-wire.ts): what the store sends (write and read concerns,
 * `maxTimeMS`, the key filter, claims) and what it makes of the server's
 * answers (outages are 503s, duplicate keys, a slow counter). Runs
 * everywhere; the contract suite against a real server is mongodb.test.ts.
 */
import { type Document, Long } from 'mongodb';
import { afterEach, describe, expect, it } from 'vitest';
import { createMongoClient, MongoStore } from '../../../server/store/mongodb/store.ts';
import type { MongoTiming } from '../../../server/store/mongodb/timing.ts';
import { StoreUnavailableError } from '../../../server/store/store.ts';
import { until } from '../../helpers/wait.ts';
import { type WireCommand, WireStub } from './wire.ts';

const MAJORITY = { w: 'majority', j: true, wtimeout: 2_000 };

interface Row {
  room: string;
  id: number;
  time: Date;
  text?: string;
  key?: string;
  void?: true;
}

/**
 * Answers the store's commands from `rows`, as far as the store's queries
 * need: a room, an id range, a key; one document per id, one per key.
 */
function answerFrom(rows: Row[]): (command: WireCommand) => Document {
  let last = Math.max(0, ...rows.map((r) => r.id));
  return ({ name, body }) => {
    if (name === 'findAndModify') {
      return { ok: 1, value: { _id: body.query._id, last: ++last } };
    }
    if (name === 'insert') {
      const writeErrors: Document[] = [];
      body.documents.forEach((doc: Row, index: number) => {
        const sameId = rows.some((r) => r.room === doc.room && r.id === doc.id);
        const sameKey = doc.key !== undefined && rows.some((r) => r.key === doc.key);
        if (sameId || sameKey) {
          const keyPattern = sameId ? { room: 1, id: 1 } : { room: 1, key: 1 };
          writeErrors.push({ index, code: 11000, errmsg: 'E11000 duplicate key', keyPattern });
        } else {
          rows.push(doc);
        }
      });
      const n = body.documents.length - writeErrors.length;
      return writeErrors.length > 0 ? { ok: 1, n, writeErrors } : { ok: 1, n };
    }
    if (name === 'find') {
      const { room, id, key } = body.filter;
      const found = rows
        .filter((r) => r.room === room)
        .filter((r) => typeof id !== 'number' || r.id === id)
        .filter((r) => id?.$gte === undefined || r.id >= id.$gte)
        .filter((r) => id?.$lt === undefined || r.id < id.$lt)
        .filter((r) => key === undefined || r.key === key.$eq)
        .sort((a, b) => (body.sort?.id ?? 1) * (a.id - b.id))
        .slice(0, body.limit ?? Number.POSITIVE_INFINITY);
      return cursor(body.find, found);
    }
    return { ok: 1 };
  };
}

const cursor = (collection: string, docs: Document[]) => ({
  ok: 1,
  cursor: { id: Long.fromNumber(0), ns: `chat.${collection}`, firstBatch: docs },
});

const outage = (code: number, codeName: string) => ({ ok: 0, code, codeName, errmsg: codeName });

let stub: WireStub;
let stores: MongoStore[] = [];

async function start(
  rows: Row[] = [],
  options: {
    timing?: Partial<MongoTiming>;
    maxPoolSize?: number;
    waitQueueTimeoutMS?: number;
  } = {},
): Promise<MongoStore> {
  stub = new WireStub();
  stub.handle = answerFrom(rows);
  const host = await stub.listen();
  const { timing, ...clientOptions } = options;
  const store = new MongoStore(createMongoClient(`mongodb://${host}/chat`, clientOptions), {
    timing,
  });
  stores.push(store);
  return store;
}

afterEach(async () => {
  for (const store of stores) await store.close();
  stores = [];
  await stub?.close();
});

const say = (text: string, key?: string) => ({ room: 'main', nickname: 'Ann', text, key });
const longAgo = () => new Date(Date.now() - 60_000);

describe('MongoStore over the wire (real driver, stand-in server)', () => {
  describe('append', () => {
    it('takes its id and inserts with w: majority, j: true, the insert bounded by maxTimeMS', async () => {
      const store = await start();
      const { message, created } = await store.append(say('hi'));
      expect({ id: message.id, created }).toEqual({ id: 1, created: true });
      const [bump] = stub.seen('findAndModify');
      const [insert] = stub.seen('insert');
      expect(bump).toMatchObject({
        upsert: true,
        update: { $inc: { last: 1 } },
        writeConcern: MAJORITY,
      });
      expect(insert).toMatchObject({ writeConcern: MAJORITY, maxTimeMS: 1_500 });
      expect(insert?.documents).toMatchObject([{ room: 'main', id: 1, text: 'hi' }]);
    });

    it('looks its key up with readConcern majority and a filter the partial index serves', async () => {
      const store = await start();
      await store.append(say('hi', 'k-1'));
      const [lookup] = stub.seen('find');
      expect(lookup).toMatchObject({
        filter: { room: 'main', key: { $eq: 'k-1', $type: 'string' } },
        readConcern: { level: 'majority' },
      });
    });
  });

  describe('append, when the counter answers after sendByMs', () => {
    it('fills its id with a void, sends no message and answers 503', async () => {
      const store = await start([], { timing: { sendByMs: 20 } });
      const answer = stub.handle;
      stub.handle = async (command) => {
        if (command.name === 'findAndModify') await new Promise((r) => setTimeout(r, 100));
        return answer(command);
      };
      await expect(store.append(say('late'))).rejects.toThrow(StoreUnavailableError);
      const inserted = stub.seen('insert').flatMap((c) => c.documents);
      expect(inserted).toMatchObject([{ room: 'main', id: 1, void: true }]);
      expect(inserted[0]).not.toHaveProperty('text');
    });
  });

  describe('append, when readers claimed its id before the insert landed', () => {
    it('answers 503 and does not acknowledge the message', async () => {
      const store = await start([{ room: 'main', id: 1, time: new Date(), void: true }]);
      stub.handle = (
        (answer) => (command: WireCommand) =>
          command.name === 'findAndModify'
            ? { ok: 1, value: { _id: 'main', last: 1 } }
            : answer(command)
      )(stub.handle);
      await expect(store.append(say('too late'))).rejects.toThrow(
        /Readers gave id main#1 up before its insert landed/,
      );
    });
  });

  describe('append, when the counter hands out an id a message holds (FerretDB: lost increments)', () => {
    it('takes the next id, even when the duplicate-key error names no index', async () => {
      const rows: Row[] = [{ room: 'main', id: 1, time: new Date(), text: 'first' }];
      const store = await start(rows);
      const answer = stub.handle;
      let bumps = 0;
      stub.handle = async (command) => {
        // A counter that fell behind: it hands out 1, which is taken, then 2.
        if (command.name === 'findAndModify')
          return { ok: 1, value: { _id: 'main', last: ++bumps } };
        const answered = await answer(command);
        // FerretDB's duplicate-key error: no keyPattern, no index name.
        for (const error of (answered.writeErrors ?? []) as Document[]) {
          delete error.keyPattern;
          error.errmsg = 'E11000 duplicate key error collection: chat.chat_messages';
        }
        return answered;
      };
      const sent = await store.append(say('second'));
      expect(sent).toMatchObject({ created: true, message: { id: 2, text: 'second' } });
      expect(rows.map((r) => r.id)).toEqual([1, 2]);
    });
  });

  describe('append, when two sends with one key race', () => {
    it("fills the loser's id with a void and answers with the first message", async () => {
      const rows: Row[] = [];
      const store = await start(rows);
      const answer = stub.handle;
      let lookups = 0;
      stub.handle = (command) => {
        // The winner lands between the loser's key lookup and its insert.
        if (command.name === 'find' && lookups++ === 0) {
          rows.push({ room: 'main', id: 7, time: new Date(), text: 'winner', key: 'k' });
          return cursor('chat_messages', []);
        }
        return answer(command);
      };
      const result = await store.append(say('loser', 'k'));
      expect(result).toMatchObject({ created: false, message: { id: 7, text: 'winner' } });
      const inserted = stub.seen('insert').flatMap((c) => c.documents);
      expect(inserted).toMatchObject([
        { id: 1, text: 'loser', key: 'k' },
        { id: 1, void: true },
      ]);
    });
  });

  describe('after', () => {
    it('reads with readConcern majority, past voids, up to limit messages', async () => {
      const time = new Date();
      const rows: Row[] = [1, 2, 3, 4, 5, 6].map((id) =>
        [2, 3].includes(id)
          ? { room: 'main', id, time, void: true }
          : { room: 'main', id, time, text: `m${id}` },
      );
      const store = await start(rows);
      const { messages, end } = await store.read('main', 0, 3);
      expect({ texts: messages.map((m) => m.text), end }).toEqual({
        texts: ['m1', 'm4', 'm5'],
        end: 'limit',
      });
      // The first find reads the room's retention mark (chat_counters), the next the messages.
      expect(stub.seen('find').find((find) => find.find === 'chat_messages')).toMatchObject({
        filter: { room: 'main', id: { $gte: 1 } },
        sort: { id: 1 },
        readConcern: { level: 'majority' },
      });
    });

    it('claims an overdue missing id with an unordered, majority insert of a void', async () => {
      const rows: Row[] = [
        { room: 'main', id: 1, time: longAgo(), text: 'm1' },
        { room: 'main', id: 3, time: longAgo(), text: 'm3' },
      ];
      const store = await start(rows);
      expect((await store.after('main', 0, 10)).map((m) => m.text)).toEqual(['m1', 'm3']);
      const [claim] = stub.seen('insert');
      expect(claim).toMatchObject({ ordered: false, writeConcern: MAJORITY });
      expect(claim?.documents).toMatchObject([{ room: 'main', id: 2, void: true }]);
    });

    it('keeps the real message when it beat the claim to the id', async () => {
      const rows: Row[] = [
        { room: 'main', id: 1, time: longAgo(), text: 'm1' },
        { room: 'main', id: 3, time: longAgo(), text: 'm3' },
      ];
      const store = await start(rows);
      const answer = stub.handle;
      stub.handle = (command) => {
        if (command.name === 'insert')
          rows.push({ room: 'main', id: 2, time: new Date(), text: 'm2' });
        return answer(command); // the claim fails with a duplicate key
      };
      expect((await store.after('main', 0, 10)).map((m) => m.text)).toEqual(['m1', 'm2', 'm3']);
    });

    it('holds a missing id within the grace: stops before it, claims nothing', async () => {
      const rows: Row[] = [
        { room: 'main', id: 1, time: new Date(), text: 'm1' },
        { room: 'main', id: 3, time: new Date(), text: 'm3' },
      ];
      const store = await start(rows);
      expect(await store.read('main', 0, 10)).toMatchObject({ messages: [{ id: 1 }], end: 'gap' });
      expect(stub.seen('insert')).toEqual([]);
    });
  });

  describe('when the server cannot serve now', () => {
    const cases: [string, string, Document][] = [
      ['insert', 'shutting down (ShutdownInProgress)', outage(91, 'ShutdownInProgress')],
      [
        'insert',
        'interrupted at shutdown (InterruptedAtShutdown)',
        outage(11600, 'InterruptedAtShutdown'),
      ],
      ['insert', 'no longer primary (NotWritablePrimary)', outage(10107, 'NotWritablePrimary')],
      [
        'insert',
        'without a majority in time (writeConcernError)',
        {
          ok: 1,
          n: 1,
          writeConcernError: { code: 64, codeName: 'WriteConcernFailed', errmsg: 'timed out' },
        },
      ],
      ['findAndModify', 'stepping down (PrimarySteppedDown)', outage(189, 'PrimarySteppedDown')],
    ];
    for (const [command, what, reply] of cases) {
      it(`answers 503 when ${command} finds the server ${what}`, async () => {
        const store = await start();
        const answer = stub.handle;
        stub.handle = (c) => (c.name === command ? reply : answer(c));
        await expect(store.append(say('hi'))).rejects.toThrow(StoreUnavailableError);
      });
    }

    it('answers 503 for a not-primary read after its one retry', async () => {
      const store = await start();
      stub.handle = (c) =>
        c.name === 'find' ? outage(13435, 'NotPrimaryNoSecondaryOk') : { ok: 1 };
      await expect(store.after('main', 0, 10)).rejects.toThrow(StoreUnavailableError);
      expect(stub.seen('find')).toHaveLength(2);
    });

    it('answers 503 when no pooled connection frees up in time (MongoWaitQueueTimeoutError)', async () => {
      const store = await start([], { maxPoolSize: 1, waitQueueTimeoutMS: 200 });
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      stub.handle = async (c) => {
        if (c.name === 'find') await held;
        return cursor('chat_messages', []);
      };
      // One read holds the only connection; the other gives up waiting for it.
      const outcomes = [store.after('main', 0, 10), store.after('main', 0, 10)].map((read) =>
        read.then(
          () => 'answered',
          (error: unknown) => error,
        ),
      );
      const never = new Promise<never>(() => {});
      const error = await Promise.race(
        outcomes.map((o) => o.then((r) => (r === 'answered' ? never : r))),
      );
      release();
      expect((await Promise.all(outcomes)).filter((o) => o === 'answered')).toHaveLength(1);
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(((error as Error).cause as Error).name).toBe('MongoWaitQueueTimeoutError');
    });

    it('answers 503 for an operation still running when the client closes (shutdown)', async () => {
      const store = await start();
      await store.ping();
      stub.handle = () => new Promise(() => {}); // never answers
      const running = store.after('main', 0, 10).catch((error: unknown) => error);
      await until(() => stub.seen('find').length === 1, 'the stub to receive the find');
      await store.close();
      const error = (await running) as StoreUnavailableError;
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error.cause as Error).name).toBe('MongoClientClosedError');
    });
  });
});
