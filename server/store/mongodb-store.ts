/**
 * The MongoDB store (official driver). The client is handed in: the entry
 * point (`open-store.ts`, `createMongoClient`) owns the URL and its timeouts.
 *
 * Ids: a `chat_counters` document per room, bumped with `$inc` (one atomic
 * `findOneAndUpdate`), hands out 1, 2, 3, … to writers in any process.
 *
 * Ordering without transactions. Allocating the id and inserting the message
 * are two writes, so writer A can take id 7, writer B id 8, and B's insert
 * land first: a reader that returned 8 would move its cursor past 7 for
 * good. So a reader never returns a message that sits after a gap:
 * `after()` (and the newest end of `before()`) gives only the contiguous run
 * of ids that follows the cursor, and holds back what lies past a missing id
 * until that id arrives. A missing id is given up on once the message after
 * it is older than `graceMs`: its writer took the id before that message's
 * time was set, and a writer that has not inserted within the grace period
 * has failed (its client got a 503 and retries with a new id). The guarantee
 * is therefore: no skip and no double, provided a writer's insert lands
 * within `graceMs` (default 10 s) of taking its id, and the writers' clocks
 * agree to within the grace period. `createMongoClient` keeps every wait of
 * an append (server selection, pool checkout, socket) well under it, so a
 * writer that cannot insert in time gets an error (and its client a 503)
 * instead of waiting; what it cannot bound is a server that accepts the
 * insert but stalls for longer than the grace period before applying it. The cost is latency only when a writer dies mid-append: the
 * messages after its id wait `graceMs` before readers see them.
 *
 * Idempotency: a unique `(room, key)` index. A send whose key already exists
 * returns the first message. If two sends with one key race, the loser has
 * already taken an id; it fills that id with a `void` document so readers
 * need not wait out the grace period for it. That id is never shown: the one
 * case where a room's visible ids skip a number (the hub reads past it from
 * the store after its short gap wait).
 *
 * On a replica set, a transaction around both writes would give the same
 * guarantee without the grace period; this store keeps one code path that
 * also runs on a standalone server.
 */
import {
  type Collection,
  type Db,
  MongoClient,
  type MongoClientOptions,
  MongoError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from 'mongodb';
import {
  type AppendResult,
  type Message,
  type MessageStore,
  type NewMessage,
  StoreUnavailableError,
} from './store.ts';

interface MessageDoc {
  room: string;
  id: number;
  time: Date;
  nickname?: string;
  text?: string;
  key?: string;
  /** An id taken by a send that turned out to repeat a key: counts for contiguity, never shown. */
  void?: true;
}

interface CounterDoc {
  _id: string;
  last: number;
}

export interface MongoStoreOptions {
  /** Database name; defaults to the one in the client's URL. */
  dbName?: string;
  /** How long a missing id holds back the messages after it. @default 10000 */
  graceMs?: number;
}

const DUPLICATE_KEY = 11000;

/** Client settings for the chat: fail fast when no server can be selected. */
export function createMongoClient(url: string, options: MongoClientOptions = {}): MongoClient {
  return new MongoClient(url, {
    serverSelectionTimeoutMS: 1_500,
    connectTimeoutMS: 1_500,
    waitQueueTimeoutMS: 1_500,
    // An answer slower than this closes the socket: no insert waits out the grace period (see above).
    socketTimeoutMS: 5_000,
    maxPoolSize: 50,
    ...options,
  });
}

export class MongoStore implements MessageStore {
  readonly kind = 'mongodb';
  readonly #client: MongoClient;
  readonly #db: Db;
  readonly #messages: Collection<MessageDoc>;
  readonly #counters: Collection<CounterDoc>;
  readonly #graceMs: number;

  constructor(client: MongoClient, options: MongoStoreOptions = {}) {
    this.#client = client;
    this.#db = client.db(options.dbName);
    this.#messages = this.#db.collection<MessageDoc>('chat_messages');
    this.#counters = this.#db.collection<CounterDoc>('chat_counters');
    this.#graceMs = options.graceMs ?? 10_000;
  }

  async init(): Promise<void> {
    // createIndexes is idempotent: several processes may run it at once.
    await this.#guard(() =>
      this.#messages.createIndexes([
        { key: { room: 1, id: 1 }, name: 'room_id', unique: true },
        {
          key: { room: 1, key: 1 },
          name: 'room_key',
          unique: true,
          partialFilterExpression: { key: { $type: 'string' } },
        },
      ]),
    );
  }

  async append(input: NewMessage): Promise<AppendResult> {
    return this.#guard(async () => {
      if (input.key !== undefined) {
        const first = await this.#byKey(input.room, input.key);
        if (first) return { message: first, created: false };
      }
      const id = await this.#nextId(input.room);
      const time = new Date();
      const doc: MessageDoc = {
        room: input.room,
        id,
        time,
        nickname: input.nickname,
        text: input.text,
      };
      if (input.key !== undefined) doc.key = input.key;
      try {
        await this.#messages.insertOne(doc);
      } catch (error) {
        if (input.key === undefined || !isDuplicateKey(error)) throw error;
        // Another send with this key won the race: fill our id, return theirs.
        await this.#messages.insertOne({ room: input.room, id, time, void: true });
        const first = await this.#byKey(input.room, input.key);
        if (!first) throw error;
        return { message: first, created: false };
      }
      return { message: toMessage(doc), created: true };
    });
  }

  async after(room: string, since: number, limit: number): Promise<Message[]> {
    return this.#guard(async () => {
      const docs = await this.#messages
        .find({ room, id: { $gt: since } }, { projection: { _id: 0, key: 0 } })
        .sort({ id: 1 })
        .limit(limit)
        .toArray();
      return this.#visible(since, docs);
    });
  }

  async before(room: string, before: number | undefined, limit: number): Promise<Message[]> {
    return this.#guard(async () => {
      const docs = await this.#messages
        .find(
          { room, id: { $lt: before ?? Number.MAX_SAFE_INTEGER } },
          { projection: { _id: 0, key: 0 } },
        )
        .sort({ id: -1 })
        .limit(limit)
        .toArray();
      docs.reverse();
      const first = docs[0];
      return first ? this.#visible(first.id - 1, docs) : [];
    });
  }

  async heads(rooms: readonly string[]): Promise<Map<string, number>> {
    if (rooms.length === 0) return new Map();
    return this.#guard(async () => {
      const rows = await this.#messages
        .aggregate<{ _id: string; head: number }>([
          { $match: { room: { $in: [...rooms] } } },
          { $group: { _id: '$room', head: { $max: '$id' } } },
        ])
        .toArray();
      return new Map(rows.map((row) => [row._id, row.head]));
    });
  }

  async ping(): Promise<void> {
    await this.#guard(() => this.#db.command({ ping: 1 }));
  }

  async close(): Promise<void> {
    await this.#client.close();
  }

  /** The run of `docs` (ascending) that follows `since` with no missing id still in flight. */
  #visible(since: number, docs: MessageDoc[]): Message[] {
    const now = Date.now();
    const visible: Message[] = [];
    let expected = since + 1;
    for (const doc of docs) {
      if (doc.id !== expected && now - doc.time.getTime() < this.#graceMs) break;
      expected = doc.id + 1;
      if (!doc.void) visible.push(toMessage(doc));
    }
    return visible;
  }

  async #nextId(room: string): Promise<number> {
    const bump = () =>
      this.#counters.findOneAndUpdate(
        { _id: room },
        { $inc: { last: 1 } },
        { upsert: true, returnDocument: 'after' },
      );
    // Two first sends to a new room can both try to insert the counter; the loser retries as an update.
    const counter = await bump().catch((error: unknown) => {
      if (isDuplicateKey(error)) return bump();
      throw error;
    });
    if (!counter) throw new Error(`No counter for room ${room}`);
    return counter.last;
  }

  async #byKey(room: string, key: string): Promise<Message | undefined> {
    const doc = await this.#messages.findOne({ room, key }, { projection: { _id: 0, key: 0 } });
    return doc ? toMessage(doc) : undefined;
  }

  async #guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (isUnavailable(error)) {
        throw new StoreUnavailableError(`MongoDB cannot be used now: ${(error as Error).message}`, {
          cause: error,
        });
      }
      throw error;
    }
  }
}

function isDuplicateKey(error: unknown): boolean {
  return error instanceof MongoServerError && error.code === DUPLICATE_KEY;
}

/** No server to talk to, or one that is stepping down: "not now", a 503. */
function isUnavailable(error: unknown): boolean {
  if (
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNetworkError ||
    error instanceof MongoTopologyClosedError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoOperationTimeoutError
  ) {
    return true;
  }
  return (
    error instanceof MongoError &&
    (error.hasErrorLabel('RetryableWriteError') || error.hasErrorLabel('TransientTransactionError'))
  );
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
