/**
 * The MongoDB store (official driver). The client is handed in: the entry
 * point (`open-store.ts`, `createMongoClient`) owns the URL.
 *
 * Ids: a `chat_counters` document per room, bumped with `$inc` (one atomic
 * `findOneAndUpdate`), hands out 1, 2, 3, … to writers in any process. Taking
 * the id and inserting the message are two writes, so id 8 can land before
 * id 7; readers return only the contiguous run after their cursor and claim
 * an id whose writer is overdue (mongodb-gaps.ts, timing in
 * mongodb-timing.ts). An append that took its id and then failed leaves that
 * id without a message for good (a crash, a 503, a network error, a pool
 * timeout, a key race): visible ids skip a number there, and readers wait up
 * to the grace for it first, unless the writer filled it with a void.
 *
 * Durability: every write is `{w: 'majority', j: true}` and every read
 * `readConcern: 'majority'`, so an acknowledged message is in the journal of
 * a majority and no reader sees a write that a failover could roll back (and
 * whose id the counter would then hand out again).
 *
 * Idempotency: the unique partial index `room_key`. A send whose key already
 * exists returns the first message; of two racing sends with one key, the
 * loser fills its id with a void and returns the winner's message.
 *
 * No transactions: they need a replica set, and claims give the same
 * guarantee on a standalone server too (docs/stores.md, "MongoDB on a
 * replica set").
 */
import { type Collection, type Db, type MongoClient, ReadConcern, WriteConcern } from 'mongodb';
import {
  type AppendResult,
  cutThrough,
  type Message,
  type MessageStore,
  type NewMessage,
  type PrunePolicy,
  StoreUnavailableError,
} from '../store.ts';
import {
  duplicateKeyIndex,
  isIndexOptionNotImplemented,
  isMaxTimeExpired,
  isUnavailable,
  onlyDuplicates,
} from './errors.ts';
import { type AfterEnd, type GapSource, readAfter, readBefore } from './gaps.ts';
import {
  belowFilter,
  COUNTERS,
  type CounterDoc,
  expiredFilter,
  fromFilter,
  keyFilter,
  MESSAGE_INDEXES,
  MESSAGES,
  type MessageDoc,
  READ_PROJECTION,
  ROOM_KEY_UNFILTERED,
} from './schema.ts';
import { checkTiming, defaultTiming, gapGraceMs, type MongoTiming, planInsert } from './timing.ts';

export { createMongoClient } from './client.ts';

export interface MongoStoreOptions {
  /** Database name; defaults to the one in the client's URL (which `createMongoClient` requires). */
  dbName?: string;
  /**
   * Timing of appends and of the readers' grace, checked by `checkTiming`.
   * The driver's timeouts are read from the client, not from here.
   */
  timing?: Partial<MongoTiming>;
}

export class MongoStore implements MessageStore {
  readonly kind = 'mongodb';
  /**
   * Grace plus clock skew (12 s by default): a read started this long after
   * a larger id became visible anywhere settles the missing id before it
   * (the id has landed, or a reader has claimed it).
   */
  readonly gapGraceMs: number;
  readonly #client: MongoClient;
  readonly #db: Db;
  readonly #messages: Collection<MessageDoc>;
  readonly #counters: Collection<CounterDoc>;
  readonly #timing: MongoTiming;
  /** Per room, the sends waiting for the next counter bump (`#nextId`). */
  readonly #bumps = new Map<string, IdWaiter[]>();

  constructor(client: MongoClient, options: MongoStoreOptions = {}) {
    this.#timing = checkTiming({ ...defaultTiming, ...options.timing, ...driverTiming(client) });
    this.gapGraceMs = gapGraceMs(this.#timing);
    this.#client = client;
    this.#db = client.db(options.dbName, {
      readConcern: new ReadConcern('majority'),
      writeConcern: new WriteConcern('majority', this.#timing.operationMaxTimeMs, true),
    });
    this.#messages = this.#db.collection<MessageDoc>(MESSAGES);
    this.#counters = this.#db.collection<CounterDoc>(COUNTERS);
  }

  async init(): Promise<void> {
    // createIndexes is idempotent: several processes may run it at once. One
    // index a command: FerretDB 1.24 drops the connection when one command
    // names two indexes that both exist already.
    await this.#unavailableOnError(async () => {
      for (const index of MESSAGE_INDEXES) {
        try {
          await this.#messages.createIndexes([index]);
        } catch (error) {
          if (index.name !== 'room_key') throw error;
          if (!isIndexOptionNotImplemented(error, 'partialFilterExpression')) throw error;
          // FerretDB: no partial indexes, but its unique index admits any number
          // of documents without a key (ROOM_KEY_UNFILTERED says why that is enough).
          await this.#messages.createIndexes([ROOM_KEY_UNFILTERED]);
        }
      }
    });
  }

  async append(input: NewMessage): Promise<AppendResult> {
    return this.#unavailableOnError(async () => {
      const { room, key } = input;
      if (key !== undefined) {
        const first = await this.#byKey(room, key);
        if (first) return { message: first, created: false };
      }
      const startedAt = Date.now();
      for (;;) {
        const id = await this.#nextId(room);
        const time = new Date();
        if (planInsert(startedAt, time.getTime(), this.#timing) === 'void') {
          await this.#fill(room, id);
          throw new StoreUnavailableError(
            `MongoDB took ${time.getTime() - startedAt} ms to hand out id ${room}#${id}: too late to insert it`,
          );
        }
        const doc: MessageDoc = { room, id, time, nickname: input.nickname, text: input.text };
        if (key !== undefined) doc.key = key;
        try {
          await this.#messages.insertOne(doc, { maxTimeMS: this.#timing.insertMaxTimeMs });
        } catch (error) {
          const outcome = await this.#insertFailed(error, input, id);
          // The id was handed out twice; take another. The plan above still
          // counts from the append's start, so the grace arithmetic holds.
          if (outcome === 'retry') continue;
          return outcome;
        }
        return { message: toMessage(doc), created: true };
      }
    });
  }

  /**
   * Up to `limit` messages after `since`, oldest first, with no id skipped
   * that may still land. Void documents never count against `limit`. It ends
   * in one of three ways (`read` says which):
   * - at the limit: `limit` messages, and more may follow at once;
   * - at the head: the room has nothing more after the last one;
   * - at a held gap: the next id is missing and the message after it is
   *   younger than the grace, so its writer may still insert it. Fewer than
   *   `limit` messages, possibly none, although the room has more. The gap
   *   settles within `gapGraceMs`: the id lands, or a reader claims it.
   * A missing id older than the grace is claimed here (a `void` insert that
   * the unique index lets win only if the message never landed).
   */
  async after(room: string, since: number, limit: number): Promise<Message[]> {
    return (await this.read(room, since, limit)).messages;
  }

  /** `after`, and how it ended: `limit`, `head` or `gap` (see `after`). */
  async read(
    room: string,
    since: number,
    limit: number,
  ): Promise<{ messages: Message[]; end: AfterEnd }> {
    return this.#unavailableOnError(async () => {
      // Ids retention deleted are not gaps to wait for or claim: start above them.
      const from = Math.max(since, await this.#prunedOf(room));
      const { messages, end } = await readAfter(this.#source(room), from, limit, this.#clock());
      return { messages: messages.map(toMessage), end };
    });
  }

  async before(room: string, before: number | undefined, limit: number): Promise<Message[]> {
    return this.#unavailableOnError(async () => {
      const below = before ?? Number.MAX_SAFE_INTEGER;
      const docs = await readBefore(this.#source(room), below, limit, this.#clock());
      return docs.map(toMessage);
    });
  }

  async heads(rooms: readonly string[]): Promise<Map<string, number>> {
    if (rooms.length === 0) return new Map();
    // One index lookup per room (the newest id on `room_id`), rather than a
    // `$group` with `$max`: that reads every message of the rooms, and
    // FerretDB has no `$max` accumulator (docs/stores.md).
    return this.#unavailableOnError(async () => {
      const options = {
        sort: { id: -1 },
        projection: { _id: 0, id: 1 },
        maxTimeMS: this.#timing.operationMaxTimeMs,
      } as const;
      const rows = await Promise.all(
        [...new Set(rooms)].map(async (room) => {
          const newest = await this.#messages.findOne({ room }, options);
          return [room, newest?.id] as const;
        }),
      );
      return new Map(rows.filter((row): row is readonly [string, number] => row[1] !== undefined));
    });
  }

  /**
   * Retention as SQLite's (\`SqliteFile.prune\`): each room cut from its
   * oldest id, a bounded number of documents per call, its newest kept.
   * The room's \`pruned\` mark moves before the documents go, so a reader
   * that starts after it never takes the deleted ids for a gap to claim.
   */
  async prune(policy: PrunePolicy): Promise<number> {
    return this.#unavailableOnError(async () => {
      const options = { maxTimeMS: this.#timing.operationMaxTimeMs };
      const targets = new Map<string, number>();
      const heads = await this.heads(policy.rooms);
      for (const [room, head] of heads) {
        if (head > policy.keepPerRoom) targets.set(room, head - policy.keepPerRoom);
      }
      // The oldest documents past the age, read and grouped here rather than
      // by `$group`: FerretDB has no `$max` accumulator (docs/stores.md), and
      // at most `maxRows` small documents come back either way.
      const expired = await this.#messages
        .find(expiredFilter(policy.olderThan), {
          ...options,
          sort: { time: 1 },
          limit: policy.maxRows,
          projection: { _id: 0, room: 1, id: 1 },
        })
        .toArray();
      for (const { room, id } of expired) targets.set(room, Math.max(id, targets.get(room) ?? 0));
      const missing = [...targets.keys()].filter((room) => !heads.has(room));
      for (const [room, head] of await this.heads(missing)) heads.set(room, head);
      let deleted = 0;
      for (const [room, target] of targets) {
        const left = policy.maxRows - deleted;
        if (left <= 0) break;
        const oldest = await this.#messages.findOne(
          { room },
          { ...options, sort: { id: 1 }, projection: { _id: 0, id: 1 } },
        );
        const through = cutThrough(target, oldest?.id, heads.get(room), left);
        if (through === undefined) continue;
        await this.#counters.updateOne({ _id: room }, { $max: { pruned: through } }, options);
        const result = await this.#messages.deleteMany({ room, id: { $lte: through } }, options);
        deleted += result.deletedCount;
      }
      return deleted;
    });
  }

  async pruned(room: string): Promise<number> {
    return this.#unavailableOnError(() => this.#prunedOf(room));
  }

  async #prunedOf(room: string): Promise<number> {
    const counter = await this.#counters.findOne(
      { _id: room },
      { projection: { pruned: 1 }, maxTimeMS: this.#timing.operationMaxTimeMs },
    );
    return counter?.pruned ?? 0;
  }

  async ping(): Promise<void> {
    await this.#unavailableOnError(() => this.#db.command({ ping: 1 }));
  }

  async close(): Promise<void> {
    await this.#client.close();
  }

  /**
   * The insert of `id` failed: a key race, a claimed id, an id handed out
   * twice (`retry`), a timeout, or the server.
   */
  async #insertFailed(
    error: unknown,
    input: NewMessage,
    id: number,
  ): Promise<AppendResult | 'retry'> {
    let index = duplicateKeyIndex(error);
    if (index === 'unknown') {
      // The server did not say which index refused the insert (FerretDB).
      // A first send with this key that is readable means the key; otherwise
      // it was the id (a claim), and the send answers 503, which is safe
      // either way: a retry with the key finds the first send.
      const first = input.key === undefined ? undefined : await this.#byKey(input.room, input.key);
      if (first) {
        await this.#fill(input.room, id);
        return { message: first, created: false };
      }
      index = 'room_id';
    }
    if (index === 'room_key' && input.key !== undefined) {
      // Another send with this key won the race: fill our id, return theirs.
      // The void is applied after the winner (the index already held it), so
      // once the void's majority write concern is met, a majority read sees
      // the winner too.
      await this.#fill(input.room, id);
      const first = await this.#byKey(input.room, input.key);
      if (first) return { message: first, created: false };
      throw new StoreUnavailableError(
        `The first send with this key in ${input.room} is not readable yet`,
        { cause: error },
      );
    }
    if (index === 'room_id') {
      // A message or a writer's own void holds the id: the counter handed it
      // out twice. MongoDB's `$inc` never does; FerretDB 1.24's loses
      // concurrent increments, so its counter can fall back behind ids already
      // used. Such an id was never free, so taking the next one skips nothing
      // (docs/stores.md, "FerretDB is not MongoDB"). A reader's claim is
      // different: it may be this send's own id given up, and that is a 503.
      if (await this.#handedOutBefore(input.room, id)) return 'retry';
      throw new StoreUnavailableError(
        `Readers gave id ${input.room}#${id} up before its insert landed`,
        { cause: error },
      );
    }
    // The server gave up on the insert (or on confirming it): fill the id, if it is still
    // free, so readers need not wait out the grace.
    if (isMaxTimeExpired(error)) await this.#fill(input.room, id).catch(() => {});
    throw error;
  }

  async #handedOutBefore(room: string, id: number): Promise<boolean> {
    const doc = await this.#messages.findOne(
      { room, id },
      { projection: { _id: 0, void: 1, filled: 1 }, maxTimeMS: this.#timing.operationMaxTimeMs },
    );
    return doc !== null && (doc.void !== true || doc.filled === true);
  }

  /** Fills `id` with a void document; if the id is taken already, that is fine. */
  async #fill(room: string, id: number): Promise<void> {
    await this.#claim(room, [id], true);
  }

  async #claim(room: string, ids: number[], filled = false): Promise<void> {
    const time = new Date();
    const voids: MessageDoc[] = ids.map((id) =>
      filled ? { room, id, time, void: true, filled: true } : { room, id, time, void: true },
    );
    try {
      await this.#messages.insertMany(voids, {
        ordered: false,
        maxTimeMS: this.#timing.operationMaxTimeMs,
      });
    } catch (error) {
      if (!onlyDuplicates(error)) throw error;
    }
  }

  #source(room: string): GapSource<MessageDoc> {
    const options = { projection: READ_PROJECTION, maxTimeMS: this.#timing.operationMaxTimeMs };
    return {
      from: (from, count) =>
        this.#messages
          .find(fromFilter(room, from), options)
          .sort({ id: 1 })
          .limit(count)
          .toArray() as Promise<MessageDoc[]>,
      below: (below, count) =>
        this.#messages
          .find(belowFilter(room, below), options)
          .sort({ id: -1 })
          .limit(count)
          .toArray() as Promise<MessageDoc[]>,
      claim: (ids) => this.#claim(room, ids),
    };
  }

  #clock() {
    return { graceMs: this.#timing.graceMs, now: Date.now };
  }

  /**
   * The next id of `room`. One counter bump per room is in flight in this
   * process; the sends that ask meanwhile share the next one (`$inc` by how
   * many they are), so a busy room costs one counter write per round trip,
   * not one per send, and this process never races itself on the counter
   * document (which FerretDB 1.24 does not update atomically).
   */
  #nextId(room: string): Promise<number> {
    return new Promise((resolve, reject) => {
      let lane = this.#bumps.get(room);
      if (lane === undefined) {
        lane = [];
        this.#bumps.set(room, lane);
        void this.#runBumps(room, lane);
      }
      lane.push({ resolve, reject });
    });
  }

  async #runBumps(room: string, lane: IdWaiter[]): Promise<void> {
    // Let the sends of this turn join the first bump.
    await Promise.resolve();
    while (lane.length > 0) {
      const batch = lane.splice(0);
      try {
        const last = await this.#bump(room, batch.length);
        const first = last - batch.length + 1;
        for (const [i, waiter] of batch.entries()) waiter.resolve(first + i);
      } catch (error) {
        for (const waiter of batch) waiter.reject(error);
      }
    }
    this.#bumps.delete(room);
  }

  /** Takes `n` ids of `room` from its counter; returns the last of them. */
  async #bump(room: string, n: number): Promise<number> {
    const bump = () =>
      this.#counters.findOneAndUpdate(
        { _id: room },
        { $inc: { last: n } },
        { upsert: true, returnDocument: 'after', maxTimeMS: this.#timing.operationMaxTimeMs },
      );
    // Two first sends to a new room can both try to insert the counter; the loser retries as an update.
    const counter = await bump().catch((error: unknown) => {
      if (duplicateKeyIndex(error) !== undefined) return bump();
      throw error;
    });
    if (!counter) throw new Error(`No counter for room ${room}`);
    return counter.last;
  }

  async #byKey(room: string, key: string): Promise<Message | undefined> {
    const doc = await this.#messages.findOne(keyFilter(room, key), {
      projection: READ_PROJECTION,
      maxTimeMS: this.#timing.operationMaxTimeMs,
    });
    return doc ? toMessage(doc as MessageDoc) : undefined;
  }

  async #unavailableOnError<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (isUnavailable(error) && !(error instanceof StoreUnavailableError)) {
        throw new StoreUnavailableError(`MongoDB cannot be used now: ${(error as Error).message}`, {
          cause: error,
        });
      }
      throw error;
    }
  }
}

interface IdWaiter {
  resolve(id: number): void;
  reject(error: unknown): void;
}

/** The driver's share of the arithmetic, as the client really has it. */
function driverTiming(client: MongoClient): Partial<MongoTiming> {
  const o = client.options;
  if (o.retryWrites) {
    throw new Error(
      'MongoStore needs a client with retryWrites: false (createMongoClient sets it): ' +
        'a retried insert could land after the readers gave its id up',
    );
  }
  return {
    serverSelectionTimeoutMS: o.serverSelectionTimeoutMS,
    waitQueueTimeoutMS: o.waitQueueTimeoutMS,
    connectTimeoutMS: o.connectTimeoutMS,
    socketTimeoutMS: o.socketTimeoutMS,
  };
}

function toMessage(doc: MessageDoc): Message {
  return {
    id: doc.id,
    room: doc.room,
    nickname: doc.nickname ?? '',
    text: doc.text ?? '',
    time: doc.time.toISOString(),
  };
}
