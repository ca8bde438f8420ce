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
import { duplicateKeyIndex, isMaxTimeExpired, isUnavailable, onlyDuplicates } from './errors.ts';
import { type AfterEnd, type GapSource, readAfter, readBefore } from './gaps.ts';
import {
  belowFilter,
  COUNTERS,
  type CounterDoc,
  expiredPipeline,
  fromFilter,
  keyFilter,
  MESSAGE_INDEXES,
  MESSAGES,
  type MessageDoc,
  READ_PROJECTION,
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
    // createIndexes is idempotent: several processes may run it at once.
    await this.#unavailableOnError(() => this.#messages.createIndexes(MESSAGE_INDEXES));
  }

  async append(input: NewMessage): Promise<AppendResult> {
    return this.#unavailableOnError(async () => {
      const { room, key } = input;
      if (key !== undefined) {
        const first = await this.#byKey(room, key);
        if (first) return { message: first, created: false };
      }
      const startedAt = Date.now();
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
        return this.#insertFailed(error, input, id);
      }
      return { message: toMessage(doc), created: true };
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
    return this.#unavailableOnError(async () => {
      const rows = await this.#messages
        .aggregate<{ _id: string; head: number }>([
          { $match: { room: { $in: [...rooms] } } },
          { $group: { _id: '$room', head: { $max: '$id' } } },
        ])
        .toArray();
      return new Map(rows.map((row) => [row._id, row.head]));
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
      const expired = await this.#messages
        .aggregate<{ _id: string; through: number }>(
          expiredPipeline(policy.olderThan, policy.maxRows),
          options,
        )
        .toArray();
      for (const row of expired)
        targets.set(row._id, Math.max(row.through, targets.get(row._id) ?? 0));
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

  /** The insert of `id` failed: a key race, a claimed id, a timeout, or the server. */
  async #insertFailed(error: unknown, input: NewMessage, id: number): Promise<AppendResult> {
    const index = duplicateKeyIndex(error);
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

  /** Fills `id` with a void document; if the id is taken already, that is fine. */
  async #fill(room: string, id: number): Promise<void> {
    await this.#claim(room, [id]);
  }

  async #claim(room: string, ids: number[]): Promise<void> {
    const time = new Date();
    const voids: MessageDoc[] = ids.map((id) => ({ room, id, time, void: true }));
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

  async #nextId(room: string): Promise<number> {
    const bump = () =>
      this.#counters.findOneAndUpdate(
        { _id: room },
        { $inc: { last: 1 } },
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
