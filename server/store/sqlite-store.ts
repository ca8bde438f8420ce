/**
 * The SQLite store (better-sqlite3): the default, one file under `data/`.
 *
 * better-sqlite3 is synchronous, and a statement that waits for the disk (a
 * stalled fsync, another process holding the write lock) would stop the
 * whole event loop: `/time`, the page and every poll with it. So the file is
 * used only from worker threads (`sqlite-thread.ts`): one writer, and one
 * reader that keeps serving catch-ups and history while the writer waits
 * for the lock (WAL lets readers run beside a writer). `:memory:` has one
 * thread for both, as a second connection would open another database.
 *
 * Appends that arrive while a transaction is in flight go together in the
 * next one (as the MySQL appender does): one `BEGIN IMMEDIATE`, one fsync.
 * Ordering and dense ids are the file's business (`sqlite-file.ts`).
 *
 * While writes are quick, a send is acknowledged in the turn that read it,
 * as the synchronous store did: a reply that comes as an event is read a
 * turn later, and on a busy loop a turn is long (bench T6: each of 4
 * senders waits for its acknowledgement before it sends again). Each append
 * goes to the writer at once, as a request of its own; the loop goes on
 * with other requests while the worker writes, and takes the replies that
 * have come as each new request comes in (`takeAnswers`, from the lane).
 * At the end of the turn it waits at most `waitMs` (`SQLITE_WAIT_MS`) for the
 * rest. An acknowledgement that waited for the end of the turn, or for a
 * blocking round trip per send, cost T6 deliveries (the bench reports).
 *
 * Writes are not quick while that wait ran out with appends unanswered (a
 * lock held elsewhere, a frozen file system) or when the last one ran longer
 * than `waitMs` in the worker (a disk slow to fsync): appends then go in
 * batches, not waited for. A stuck disk costs the loop at most `waitMs`,
 * once. The worker's own time is the judge, not the round trip: a reply that
 * waited for a busy loop says nothing of the disk.
 *
 * Every call has a deadline, `timeoutMs` after it was made (the chat's
 * `STORE_TIMEOUT_MS`). A read not answered by then fails as unavailable. A
 * write waits for the lock only until its deadline and rolls back rather
 * than commit after it, so a send answered 503 because the lock was held has
 * stored nothing. Only a write already committing when time runs out (a
 * disk stalled in fsync) can land after its 503; it is then published, and
 * a retry with the same key gets it back (`created: false`).
 */
import type { SqliteFileOptions } from './sqlite-file.ts';
import { SqliteThread, SqliteWorkerError } from './sqlite-thread.ts';
import {
  type AppendResult,
  type Message,
  type MessageStore,
  type NewMessage,
  type PrunePolicy,
  StoreUnavailableError,
} from './store.ts';

/** Sends per transaction, at most. */
const MAX_BATCH = 200;

export interface SqliteStoreOptions extends Pick<SqliteFileOptions, 'synchronous' | 'maxMb'> {
  /** How long a call may take, in milliseconds (`STORE_TIMEOUT_MS`). @default 2000 */
  timeoutMs?: number;
  /**
   * How long the event loop may wait for a write while writes are quick, in
   * milliseconds (`SQLITE_WAIT_MS`); 0 never waits. @default 1
   */
  waitMs?: number;
}

interface Pending {
  input: NewMessage;
  deadline: number;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

export class SqliteStore implements MessageStore {
  readonly kind = 'sqlite';
  readonly #writer: SqliteThread;
  readonly #reader: SqliteThread;
  readonly #timeoutMs: number;
  readonly #waitMs: number;
  /** Appends waiting for the transaction in flight to finish. */
  readonly #waiting: Pending[] = [];
  #writing = false;
  /** Quick appends not yet answered. */
  #inFlight = 0;
  /** The end of this turn is booked to take the quick appends' replies. */
  #taking = false;
  /** The last end-of-turn wait ran out with quick appends unanswered. */
  #stalled = false;
  #closed = false;
  #dataVersion = -1;

  /** `file` is a path, or `:memory:`. Nothing is opened before `init()`. */
  constructor(file: string, options: SqliteStoreOptions = {}) {
    this.#timeoutMs = options.timeoutMs ?? 2_000;
    this.#waitMs = options.waitMs ?? 1;
    const synchronous = options.synchronous ?? 'FULL';
    this.#writer = new SqliteThread(file, { synchronous, maxMb: options.maxMb });
    this.#reader =
      file === ':memory:' ? this.#writer : new SqliteThread(file, { synchronous, readOnly: true });
  }

  async init(): Promise<void> {
    // The writer migrates; the reader opens once the schema is there.
    await this.#call(() => this.#writer.opened());
    await this.#call(() => this.#reader.opened());
  }

  append(input: NewMessage): Promise<AppendResult> {
    if (this.#closed) return Promise.reject(closedError());
    return new Promise((resolve, reject) => {
      const pending = { input, deadline: this.#deadline(), resolve, reject };
      if (this.#quickNow()) {
        this.#quick(pending);
        return;
      }
      this.#waiting.push(pending);
      // At once, as the MySQL appender does: the sends that come while it is
      // in flight go in the next batch.
      if (!this.#writing) void this.#drain();
    });
  }

  after(room: string, since: number, limit: number): Promise<Message[]> {
    return this.#read({ op: 'after', room, since, limit });
  }

  before(room: string, before: number | undefined, limit: number): Promise<Message[]> {
    return this.#read({ op: 'before', room, before, limit });
  }

  heads(rooms: readonly string[]): Promise<Map<string, number>> {
    return this.#read({ op: 'heads', rooms });
  }

  /** On the writer, like an append: the deletes take the write lock. */
  prune(policy: PrunePolicy): Promise<number> {
    if (this.#closed) return Promise.reject(closedError());
    return this.#call(() => this.#writer.request({ op: 'prune', policy }, this.#deadline()));
  }

  pruned(room: string): Promise<number> {
    return this.#read({ op: 'pruned', room });
  }

  /**
   * Asks the writer's connection for `PRAGMA data_version`, which changes
   * when another connection (another process on the same file) commits, and
   * not for this store's own writes, which reach the message log directly:
   * an unchanged value means nothing to look for. Any doubt (a busy or
   * stuck writer) answers yes.
   */
  async othersWrote(): Promise<boolean> {
    try {
      const version = await this.#call(() =>
        this.#writer.request({ op: 'dataVersion' }, this.#deadline(), true),
      );
      const changed = version !== this.#dataVersion;
      this.#dataVersion = version;
      return changed;
    } catch {
      return true;
    }
  }

  async ping(): Promise<void> {
    await this.#read({ op: 'ping' });
  }

  async close(): Promise<void> {
    this.#closed = true;
    // One thread for both on `:memory:`.
    await Promise.all([...new Set([this.#writer, this.#reader])].map((thread) => thread.close()));
  }

  /** Writes the waiting appends, a batch at a time, until none wait. */
  async #drain(): Promise<void> {
    this.#writing = true;
    while (this.#waiting.length > 0) {
      const now = Date.now();
      const batch: Pending[] = [];
      for (const pending of this.#waiting.splice(0, MAX_BATCH)) {
        if (pending.deadline >= now) batch.push(pending);
        else
          pending.reject(new StoreUnavailableError('SQLite: the append waited past its deadline'));
      }
      if (batch.length === 0) continue;
      try {
        settle(batch, await this.#write(batch));
      } catch (error) {
        if (batch.length === 1 || error instanceof StoreUnavailableError) {
          for (const pending of batch) pending.reject(error);
          continue;
        }
        // One bad send must not fail the others: write them one by one.
        for (const pending of batch) {
          await this.#write([pending]).then(
            (results) => settle([pending], results),
            pending.reject,
          );
        }
      }
    }
    this.#writing = false;
  }

  /**
   * Takes the writer's replies that have come (the lane calls it as each
   * request comes in): a send stored while the loop served other requests
   * is acknowledged now, in this turn.
   */
  takeAnswers(): void {
    if (this.#inFlight > 0) this.#writer.takeReplies();
  }

  /** Whether the next append may go at once, to be taken in this turn (the class comment). */
  #quickNow(): boolean {
    return (
      this.#waitMs > 0 && !this.#writing && !this.#stalled && this.#writer.lastRunMs <= this.#waitMs
    );
  }

  /**
   * One append, at once, as a request of its own: its reply is taken as the
   * next requests come in (`takeAnswers`), or at the end of the turn, when
   * the loop waits at most `waitMs` for the turn's last replies.
   */
  #quick(pending: Pending): void {
    this.#inFlight += 1;
    const answered = () => {
      this.#inFlight -= 1;
      if (this.#inFlight === 0) this.#stalled = false;
    };
    this.#call(() =>
      this.#writer.request({ op: 'append', inputs: [pending.input] }, pending.deadline),
    ).then(
      (results) => {
        answered();
        pending.resolve(results[0]!);
      },
      (error: unknown) => {
        answered();
        pending.reject(error);
      },
    );
    if (this.#taking) return;
    this.#taking = true;
    setImmediate(() => {
      this.#taking = false;
      // Still unanswered after the wait: a stuck disk or a held lock. The
      // appends after go in batches, not waited for, until these are answered.
      if (!this.#writer.awaitReplies(this.#waitMs)) this.#stalled = true;
    });
  }

  #write(batch: Pending[]): Promise<AppendResult[]> {
    // The batch's deadline is its earliest: no send in it waits past its own.
    const deadline = Math.min(...batch.map((pending) => pending.deadline));
    const inputs = batch.map((pending) => pending.input);
    const call = { op: 'append', inputs } as const;
    return this.#call(() => this.#writer.request(call, deadline));
  }

  #read<C extends Parameters<SqliteThread['request']>[0]>(call: C) {
    if (this.#closed) return Promise.reject(closedError());
    return this.#call(() => this.#reader.request(call, this.#deadline(), true));
  }

  #deadline(): number {
    return Date.now() + this.#timeoutMs;
  }

  /** Busy, I/O, full-disk and deadline errors mean SQLite cannot be used now: a 503, not a 500. */
  async #call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof SqliteWorkerError && isUnavailable(error.code)) {
        throw new StoreUnavailableError(`SQLite cannot be used now: ${error.code}`, {
          cause: error,
        });
      }
      if (this.#closed && !(error instanceof StoreUnavailableError)) throw closedError(error);
      throw error;
    }
  }
}

function isUnavailable(code: string | undefined): boolean {
  return (
    code !== undefined &&
    (code === 'CHAT_DEADLINE' || /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY)/.test(code))
  );
}

function closedError(cause?: unknown): StoreUnavailableError {
  return new StoreUnavailableError('SQLite is closed', { cause });
}

function settle(batch: Pending[], results: AppendResult[]): void {
  for (const [i, pending] of batch.entries()) pending.resolve(results[i]!);
}
