/**
 * The `MessageStore` seam: where messages are kept.
 *
 * One implementation per database (memory, SQLite, MySQL, MongoDB), all held
 * to the same contract by `test/store/contract.ts`:
 *
 * - `append` assigns the id and the time and resolves only once the message
 *   is durable. Ids are per room, start at 1 and increase, and a message
 *   with a larger id is never visible to a reader before every smaller id of
 *   its room is. That is what lets a reader's cursor never skip a message
 *   (docs/design.md, "Rules that make delivery correct", rule 2). Memory,
 *   SQLite and MySQL give an id back when its append fails, so their ids
 *   increase by exactly 1. MongoDB cannot: any append that fails after
 *   taking its id (a crash, a 503, a network error, a pool timeout, a lost
 *   key race) leaves that id without a message for good, and readers skip it
 *   once it is settled (`gapGraceMs`).
 * - `append` with a `key` already used in the room stores nothing and
 *   returns the first message (`created: false`): safe retries.
 * - A store that cannot reach its database throws `StoreUnavailableError`;
 *   the HTTP layer answers 503 and nothing is acknowledged.
 */

import type { Message } from '../../protocol/protocol.ts';

export type { Message };

/** What `POST /send` hands the store once its fields are valid. */
export interface NewMessage {
  room: string;
  nickname: string;
  text: string;
  /** Idempotency key: a repeat with the same key in the same room stores nothing new. */
  key?: string | undefined;
}

export interface AppendResult {
  message: Message;
  /** False when the key was seen before and `message` is the first one stored with it. */
  created: boolean;
}

export interface MessageStore {
  /** `memory`, `sqlite`, `mysql` or `mongodb`: shown in logs and metrics. */
  readonly kind: string;
  /**
   * How long a missing id may still appear after a larger one is visible, in
   * milliseconds. 0 (or absent) for a store whose writers commit in id order
   * (SQLite, MySQL): there a gap is final, an append that failed after taking
   * its id. A store without that order (MongoDB) holds a gap back for this
   * long before it gives the id up, and the message log waits as long
   * (docs/design.md, "Cursors and dense ids").
   */
  readonly gapGraceMs?: number;
  /** Creates or migrates the schema. Safe to call from several processes at once. */
  init(): Promise<void>;
  append(message: NewMessage): Promise<AppendResult>;
  /** Messages of `room` with id > `since`, oldest first, at most `limit`. */
  after(room: string, since: number, limit: number): Promise<Message[]>;
  /**
   * The largest id of each room, for the rooms that have messages (a room
   * without any is absent). What the message log compares with what it knows
   * when no bus brings every message (docs/design.md, "The seams", store watch),
   * and how a cursor ahead of its room is told apart from one that is early.
   */
  heads(rooms: readonly string[]): Promise<Map<string, number>>;
  /**
   * Whether another connection may have written since the last call: a cheap
   * check before `heads` (SQLite's `PRAGMA data_version`). Absent: assume yes.
   * Asynchronous like every call here: no store makes the event loop wait.
   */
  othersWrote?(): Promise<boolean>;
  /** The latest `limit` messages of `room` with id < `before` (all when undefined), oldest first. */
  before(room: string, before: number | undefined, limit: number): Promise<Message[]>;
  /**
   * Deletes old messages by the retention policy, at most `policy.maxRows`
   * of them per call, and returns how many it deleted. The newest message
   * of a room is always kept, so its head (and the next id) carry on and a
   * cursor is never taken for one ahead of its room. What is deleted is
   * always a room's oldest run of ids, recorded by `pruned`.
   */
  prune(policy: PrunePolicy): Promise<number>;
  /**
   * The largest id of `room` deleted by `prune` (0 when none was): every id
   * at or below it is gone, so a cursor below it has missed messages for
   * good and is told so (`expired`, docs/design.md, "Limits").
   */
  pruned(room: string): Promise<number>;
  /** Resolves when the database answers; throws `StoreUnavailableError` when it does not. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** What one `prune` call may delete. */
export interface PrunePolicy {
  /** Messages stored before this time go (each room's newest excepted). */
  olderThan: Date;
  /** Each room in `rooms` keeps at most this many messages. */
  keepPerRoom: number;
  /** The rooms whose count to look at: those written to since the last call (only an append grows one). */
  rooms: readonly string[];
  /** Rows deleted by one call at most, so a call stays short however much has expired. */
  maxRows: number;
}

/**
 * Where to cut a room that should keep only ids above \`target\`: never its
 * newest message (\`head\`), and at most \`left\` ids from its oldest, so one
 * call deletes a bounded number of rows (ids are dense, so \`left\` ids are
 * at most \`left\` rows). Undefined when nothing is to go.
 */
export function cutThrough(
  target: number,
  oldest: number | null | undefined,
  head: number | null | undefined,
  left: number,
): number | undefined {
  if (!oldest || !head) return undefined;
  const through = Math.min(target, head - 1, oldest + left - 1);
  return through >= oldest ? through : undefined;
}

/** The database cannot be reached (or did not answer in time). Maps to 503. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}
