/**
 * The MongoDB store's documents, its indexes and the query filters that rely
 * on them, kept side by side so a test can check each query against the
 * index it needs (test/store/mongodb/schema.test.ts) and a server-backed test
 * can check the plan with `explain()`.
 *
 * Collections: `chat_messages` (one document per id, message or void) and
 * `chat_counters` (`{_id: room, last}`: the last id handed out in the room).
 */
import type { Filter, IndexDescription } from 'mongodb';

export interface MessageDoc {
  room: string;
  id: number;
  time: Date;
  nickname?: string;
  text?: string;
  key?: string;
  /**
   * An id that holds no message: taken by a send that lost a key race or ran
   * out of time, or claimed by a reader that waited out the grace for it.
   * It counts for contiguity and is never shown.
   */
  void?: true;
  /**
   * On a void: its writer filled its own id (a lost key race, no time left),
   * as opposed to a reader's claim. An id held this way was handed out
   * before, so a send that is handed it again may take another
   * (`MongoStore.append`).
   */
  filled?: true;
}

export interface CounterDoc {
  _id: string;
  last: number;
  /** The largest id retention deleted (absent: none): readers start above it. */
  pruned?: number;
}

export const MESSAGES = 'chat_messages';
export const COUNTERS = 'chat_counters';

/**
 * `room_id`: one document per id (the arbiter between a late insert and a
 * reader's claim), and the range scans of `after` and `before`.
 *
 * `room_key`: one message per idempotency key and room. Partial, so that
 * messages without a key and voids are not in it. The planner uses a
 * partial index only for a query that implies its filter, and it derives no
 * `$type` from an equality, so `keyFilter` repeats the `$type` (checked with
 * `explain()` by the server-backed suite). The index keeps the filter it was
 * created with in earlier versions, so no migration is needed.
 */
export const MESSAGE_INDEXES: IndexDescription[] = [
  { key: { room: 1, id: 1 }, name: 'room_id', unique: true },
  {
    key: { room: 1, key: 1 },
    name: 'room_key',
    unique: true,
    partialFilterExpression: { key: { $type: 'string' } },
  },
  // Retention: the oldest documents by time without a collection scan (`expiredFilter`).
  { key: { time: 1 }, name: 'time' },
];

/** The documents stored before `cutoff` (read oldest first, on the `time` index). */
export function expiredFilter(cutoff: Date): Filter<MessageDoc> {
  return { time: { $lt: cutoff } };
}
/**
 * `room_key` for a server that refuses `partialFilterExpression` (FerretDB
 * 1.x answers NotImplemented, code 238): the same key, unique, no filter.
 * It is the right index only where a unique index lets any number of
 * documents without the field in (FerretDB on SQLite, whose unique index
 * on `key` is an SQLite one: NULLs are distinct). On MongoDB a missing field
 * counts as null and every message without a key would collide, so the store
 * uses this only when the server refused the partial one, and the contract
 * suite (many messages without a key in one room) is what checks it
 * (docs/stores.md, "FerretDB is not MongoDB").
 */
export const ROOM_KEY_UNFILTERED: IndexDescription = {
  key: { room: 1, key: 1 },
  name: 'room_key',
  unique: true,
};

/** The first message sent with `key` in `room`: an equality that implies `room_key`'s filter. */
export function keyFilter(room: string, key: string): Filter<MessageDoc> {
  return { room, key: { $eq: key, $type: 'string' } };
}

/** Ids from `from` on (ascending with `sort: {id: 1}`): a range on `room_id`. */
export function fromFilter(room: string, from: number): Filter<MessageDoc> {
  return { room, id: { $gte: from } };
}

/** Ids below `below` (descending with `sort: {id: -1}`): a range on `room_id`. */
export function belowFilter(room: string, below: number): Filter<MessageDoc> {
  return { room, id: { $lt: below } };
}

/** What readers fetch: everything but `_id` and the key (never shown). */
export const READ_PROJECTION = { _id: 0, key: 0 } as const;
