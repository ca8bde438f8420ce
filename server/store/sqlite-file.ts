/**
 * The SQLite file itself, as the store's worker thread sees it: one
 * better-sqlite3 connection and its prepared statements, all synchronous.
 * Only `sqlite-worker.ts` runs this code, so a slow or locked disk stops that
 * thread and never the event loop (`sqlite-store.ts` holds the other end).
 *
 * Ordering: a batch of appends runs in one `BEGIN IMMEDIATE` transaction,
 * which takes SQLite's single write lock before it reads any room's last id.
 * Writers, in this process or in other cluster workers, therefore allocate
 * ids and commit one transaction at a time, so commit order is id order and
 * a reader can never see id n+1 before id n. A batch that does not commit
 * rolls back whole, so ids stay dense.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import {
  type AppendResult,
  cutThrough,
  type Message,
  type NewMessage,
  type PrunePolicy,
} from './store.ts';

/** Schema versions, applied in order; `PRAGMA user_version` records the last one applied. */
const migrations: string[] = [
  `CREATE TABLE messages (
     room     TEXT    NOT NULL,
     id       INTEGER NOT NULL,
     nickname TEXT    NOT NULL,
     text     TEXT    NOT NULL,
     time     TEXT    NOT NULL,
     key      TEXT,
     PRIMARY KEY (room, id)
   ) WITHOUT ROWID;
   CREATE UNIQUE INDEX messages_room_key ON messages (room, key) WHERE key IS NOT NULL;`,
  // Retention (\`prune\`): the oldest messages by time without a scan, and
  // how far each room has been cut, so a cursor behind it is told.
  `CREATE INDEX messages_time ON messages (time);
   CREATE TABLE pruned (
     room    TEXT    NOT NULL PRIMARY KEY,
     through INTEGER NOT NULL
   ) WITHOUT ROWID;`,
];

const COLUMNS = 'id, room, nickname, text, time';

/**
 * The statements, each prepared once per connection. `+?` in place of `?`
 * is on purpose, where SQLite's planner would otherwise read the value
 * bound: the equality beside `MIN`/`MAX`, which it weighs for a plan that
 * does not use the index (`whereLoopOutputAdjust`), and a bound `LIMIT`.
 * SQLite marks such a parameter so that a new value may get a new plan,
 * and better-sqlite3 clears the bindings after every run
 * (`sqlite3_clear_bindings`), which expires a marked statement: it was
 * compiled again at every call, in the writer's thread at every append.
 * The unary plus leaves the value and the comparison's affinity as they
 * were (the column's), and the index is chosen as before: the plans do not
 * depend on these values. `bench/sqlite-statements.ts` times each
 * statement as written here against the same with plain `?`.
 */
export const SQL = {
  byKey: `SELECT ${COLUMNS} FROM messages WHERE room = ? AND key = ?`,
  lastId: 'SELECT COALESCE(MAX(id), 0) AS last FROM messages WHERE room = +?',
  insert: 'INSERT INTO messages (room, id, nickname, text, time, key) VALUES (?, ?, ?, ?, ?, ?)',
  after: `SELECT ${COLUMNS} FROM messages WHERE room = +? AND id > ? ORDER BY id LIMIT +?`,
  before: `SELECT * FROM (
     SELECT ${COLUMNS} FROM messages WHERE room = +? AND id < ? ORDER BY id DESC LIMIT +?
   ) ORDER BY id`,
  head: 'SELECT MAX(id) AS head FROM messages WHERE room = +?',
  oldest: 'SELECT MIN(id) AS oldest FROM messages WHERE room = +?',
  // The oldest rows by time (the index), grouped: how far each room has expired.
  expired: `SELECT room, MAX(id) AS through FROM (
     SELECT room, id FROM messages WHERE time < ? ORDER BY time LIMIT +?
   ) GROUP BY room`,
  delete: 'DELETE FROM messages WHERE room = ? AND id <= ?',
  notePruned: `INSERT INTO pruned (room, through) VALUES (?, ?)
     ON CONFLICT (room) DO UPDATE SET through = MAX(through, excluded.through)`,
  pruned: 'SELECT through FROM pruned WHERE room = ?',
} as const;

/** How long opening and migrating may wait for another process's write lock. */
const OPEN_BUSY_MS = 5_000;
/** How far past a call's own deadline its wait for the lock may end (`#setBusy`). */
const BUSY_SLACK_MS = 20;

/** An append's first pause for the write lock, and its longest (`retryWhileBusy`). */
const APPEND_FIRST_PAUSE_MS = 0.05;
const APPEND_MAX_PAUSE_MS = 2;

/** Something to `Atomics.wait` on: a synchronous sleep, in the store's own thread. */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * Runs `step`, and again after a short pause while it fails with
 * `SQLITE_BUSY`, until `deadline` (a `Date.now()` time), the pauses doubling
 * from `firstPauseMs` to `maxPauseMs`. Two uses:
 * - Opening, for up to `OPEN_BUSY_MS`. SQLite skips the busy handler where
 *   waiting could deadlock, and says so ("The presence of a busy handler
 *   does not guarantee that it will be invoked when there is lock
 *   contention", sqlite3_busy_handler): two processes switching a new file
 *   to WAL at once both read it first, so one of them gets `SQLITE_BUSY` at
 *   once, whatever `busy_timeout` says (`test/store/sqlite-open.test.ts`
 *   reproduces it).
 * - An append's wait for the write lock (`append`), in steps far shorter
 *   than SQLite's own busy handler, whose first sleep is a whole
 *   millisecond and whose next ones grow to 100: another process's commit
 *   (a cluster worker on the same file) frees the lock within a fraction of
 *   that, and each sleep past it is latency for the sender.
 */
function retryWhileBusy<T>(
  step: () => T,
  deadline = Date.now() + OPEN_BUSY_MS,
  firstPauseMs = 2,
  maxPauseMs = 100,
): T {
  for (let pauseMs = firstPauseMs; ; pauseMs = Math.min(pauseMs * 2, maxPauseMs)) {
    try {
      return step();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const busy = typeof code === 'string' && code.startsWith('SQLITE_BUSY');
      if (!busy || Date.now() + pauseMs > deadline) throw error;
      // Two processes that collided pause for different times, so the next try does not collide.
      Atomics.wait(PAUSE, 0, 0, pauseMs * (0.5 + Math.random()));
    }
  }
}

export interface SqliteFileOptions {
  /** `PRAGMA synchronous`: FULL (default) fsyncs every commit, so an acknowledged message survives a power cut. */
  synchronous?: 'FULL' | 'NORMAL';
  /**
   * A reader only reads: it neither sets the journal mode nor migrates, so
   * it never waits for the write lock. Open it once a writer has run.
   */
  readOnly?: boolean;
  /**
   * The file stops growing at this many MiB (`PRAGMA max_page_count`, for
   * this connection's writes): past it an append fails with `SQLITE_FULL`,
   * as on a full disk, until rows are deleted. Unlimited when absent.
   */
  maxMb?: number | undefined;
}

/** Thrown when a request's deadline passed before its work could finish: nothing was written. */
export class DeadlineError extends Error {
  readonly code = 'CHAT_DEADLINE';
}

/** Whether an error with this code means the file cannot be used now (busy, I/O, full, a deadline), not that one request was bad. */
export function isUnavailable(code: string | undefined): boolean {
  return (
    code !== undefined &&
    (code === 'CHAT_DEADLINE' || /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY)/.test(code))
  );
}

type Row = Message;

export class SqliteFile {
  readonly #db: Database.Database;
  readonly #byKey: Database.Statement<[string, string], Row>;
  readonly #lastId: Database.Statement<[string], { last: number }>;
  readonly #insert: Database.Statement<[string, number, string, string, string, string | null]>;
  readonly #after: Database.Statement<[string, number, number], Row>;
  readonly #before: Database.Statement<[string, number, number], Row>;
  readonly #head: Database.Statement<[string], { head: number | null }>;
  readonly #oldest: Database.Statement<[string], { oldest: number | null }>;
  readonly #expired: Database.Statement<[string, number], { room: string; through: number }>;
  readonly #delete: Database.Statement<[string, number]>;
  readonly #notePruned: Database.Statement<[string, number]>;
  readonly #pruned: Database.Statement<[string], { through: number }>;
  readonly #prune: Database.Transaction<(policy: PrunePolicy) => number>;
  readonly #append: Database.Transaction<
    (inputs: NewMessage[], deadline: number) => AppendResult[]
  >;
  #busyMs = -1;

  /** Opens `file` (a path or `:memory:`) and, unless `readOnly`, migrates its schema. */
  constructor(file: string, options: SqliteFileOptions = {}) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.#db = new Database(file);
    this.#setBusy(OPEN_BUSY_MS);
    if (!options.readOnly) {
      retryWhileBusy(() => this.#db.pragma('journal_mode = WAL'));
      this.#db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
      this.#migrate();
      if (options.maxMb !== undefined) {
        const pageSize = this.#db.pragma('page_size', { simple: true }) as number;
        const pages = Math.floor((options.maxMb * 2 ** 20) / pageSize);
        this.#db.pragma(`max_page_count = ${pages}`);
      }
    }
    this.#byKey = this.#db.prepare(SQL.byKey);
    this.#lastId = this.#db.prepare(SQL.lastId);
    this.#insert = this.#db.prepare(SQL.insert);
    this.#after = this.#db.prepare(SQL.after);
    this.#before = this.#db.prepare(SQL.before);
    this.#head = this.#db.prepare(SQL.head);
    this.#append = this.#db.transaction((inputs, deadline) => this.#appendIn(inputs, deadline));
    this.#oldest = this.#db.prepare(SQL.oldest);
    this.#expired = this.#db.prepare(SQL.expired);
    this.#delete = this.#db.prepare(SQL.delete);
    this.#notePruned = this.#db.prepare(SQL.notePruned);
    this.#pruned = this.#db.prepare(SQL.pruned);
    this.#prune = this.#db.transaction((policy) => this.#pruneIn(policy));
  }

  /** \`MessageStore.prune\`, in one transaction that waits for the write lock until \`deadline\`. */
  prune(policy: PrunePolicy, deadline: number): number {
    this.#setBusy(Math.max(1, deadline - Date.now()));
    return this.#prune.immediate(policy);
  }

  pruned(room: string): number {
    return this.#pruned.get(room)?.through ?? 0;
  }

  /**
   * Stores `inputs` in one transaction, results in the same order. The
   * transaction waits for the write lock only until `deadline` (a
   * `Date.now()` time), and rolls back rather than commit once it has
   * passed: a send answered 503 for its timeout has not been stored by a
   * transaction that was still waiting.
   */
  append(inputs: NewMessage[], deadline: number): AppendResult[] {
    // SQLite's busy handler off: the wait for the lock is `retryWhileBusy`'s.
    this.#setBusy(0);
    return retryWhileBusy(
      () => this.#append.immediate(inputs, deadline),
      deadline,
      APPEND_FIRST_PAUSE_MS,
      APPEND_MAX_PAUSE_MS,
    );
  }

  after(room: string, since: number, limit: number): Message[] {
    return this.#after.all(room, since, limit);
  }

  before(room: string, before: number | undefined, limit: number): Message[] {
    return this.#before.all(room, before ?? Number.MAX_SAFE_INTEGER, limit);
  }

  heads(rooms: readonly string[]): Map<string, number> {
    const heads = new Map<string, number>();
    // One index seek per room on the (room, id) primary key.
    for (const room of rooms) {
      const head = this.#head.get(room)?.head;
      if (head) heads.set(room, head);
    }
    return heads;
  }

  /**
   * `PRAGMA data_version`: it changes when another connection commits, and
   * not for this connection's own commits.
   */
  dataVersion(): number {
    return this.#db.pragma('data_version', { simple: true }) as number;
  }

  ping(): void {
    this.#db.prepare('SELECT 1').get();
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }

  #appendIn(inputs: NewMessage[], deadline: number): AppendResult[] {
    const time = new Date().toISOString();
    const last = new Map<string, number>();
    /** Keys stored by this batch, `room\0key`: a key repeated within the batch gets the first message. */
    const stored = new Map<string, Message>();
    const results = inputs.map((input): AppendResult => {
      const keyed = input.key === undefined ? undefined : `${input.room}\0${input.key}`;
      if (keyed !== undefined) {
        const seen = stored.get(keyed) ?? this.#byKey.get(input.room, input.key!);
        if (seen) return { message: seen, created: false };
      }
      const id = (last.get(input.room) ?? this.#lastId.get(input.room)?.last ?? 0) + 1;
      this.#insert.run(input.room, id, input.nickname, input.text, time, input.key ?? null);
      last.set(input.room, id);
      const message = { id, room: input.room, nickname: input.nickname, text: input.text, time };
      if (keyed !== undefined) stored.set(keyed, message);
      return { message, created: true };
    });
    // Throwing rolls the transaction back: past the deadline nothing commits.
    if (Date.now() > deadline) throw new DeadlineError('the write missed its deadline');
    return results;
  }

  #pruneIn(policy: PrunePolicy): number {
    const targets = new Map<string, number>();
    for (const room of policy.rooms) {
      const head = this.#head.get(room)?.head ?? 0;
      if (head > policy.keepPerRoom) targets.set(room, head - policy.keepPerRoom);
    }
    for (const { room, through } of this.#expired.all(
      policy.olderThan.toISOString(),
      policy.maxRows,
    )) {
      targets.set(room, Math.max(through, targets.get(room) ?? 0));
    }
    let deleted = 0;
    for (const [room, target] of targets) {
      const left = policy.maxRows - deleted;
      if (left <= 0) break;
      const through = cutThrough(
        target,
        this.#oldest.get(room)?.oldest,
        this.#head.get(room)?.head,
        left,
      );
      if (through === undefined) continue;
      deleted += this.#delete.run(room, through).changes;
      this.#notePruned.run(room, through);
    }
    return deleted;
  }

  #setBusy(ms: number): void {
    // Within a few milliseconds is close enough: a PRAGMA per append cost
    // the worker a statement each time, and a write that waits a little past
    // its deadline still rolls back (`#appendIn`).
    if (ms <= this.#busyMs && ms >= this.#busyMs - BUSY_SLACK_MS) return;
    this.#db.pragma(`busy_timeout = ${ms}`);
    this.#busyMs = ms;
  }

  #migrate(): void {
    // IMMEDIATE takes the write lock first, so two processes starting at once
    // apply each migration exactly once: the second waits, then sees the new version.
    this.#db
      .transaction(() => {
        const version = this.#db.pragma('user_version', { simple: true }) as number;
        for (const [index, sql] of migrations.entries()) {
          if (index < version) continue;
          this.#db.exec(sql);
        }
        this.#db.pragma(`user_version = ${migrations.length}`);
      })
      .immediate();
  }
}
