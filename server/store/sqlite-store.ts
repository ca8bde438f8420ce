/**
 * The SQLite store (better-sqlite3): the default, one file under `data/`.
 *
 * better-sqlite3 is synchronous, and a statement that waits for the disk (a
 * stalled fsync, another process holding the write lock) would stop the
 * whole event loop: `/time`, the page and every poll with it. So the file is
 * used only from worker threads (`sqlite-thread.ts`): one writer, and one
 * reader that keeps serving catch-ups and history while the writer waits
 * for the lock (WAL lets readers run beside a writer). `:memory:` has one
 * thread for both, as a second connection would open another database. In
 * a cluster worker the writer is the primary's, one for every worker
 * (`cluster-writer.ts`), and only the reader is this store's own.
 *
 * Each append goes to the writer at once, as a request of its own. The
 * writer commits group by group (`sqlite-worker.ts`): the appends that came
 * while it was in a transaction go together in the next one, one
 * `BEGIN IMMEDIATE`, one fsync, so four senders share a commit without the
 * loop holding any of them back. Ordering and dense ids are the file's
 * business (`sqlite-file.ts`).
 *
 * While writes are quick, a send is acknowledged in the turn that read it,
 * as the synchronous store did: a reply that comes as an event is read a
 * turn later, and on a busy loop a turn is long (bench T6: each of 4
 * senders waits for its acknowledgement before it sends again). So the
 * replies that have come are taken as each new request comes in (the
 * store listens to Node's own `http.server.request.start` diagnostics
 * channel, so nothing outside the store knows of it) and as each append
 * comes in, and at the end of a turn that made a quick append the loop waits at most `waitMs`
 * (`SQLITE_WAIT_MS`) for the rest (`Atomics.wait`). The wait is off by
 * default: the hub's delivery batch makes answers full without it, and a
 * loop blocked on the worker serves nobody meanwhile.
 *
 * Writes are not quick while that wait ran out with appends unanswered (a
 * lock held elsewhere, a frozen file system) or when the last one ran longer
 * than `waitMs` in the worker (a disk slow to fsync): appends are then not
 * waited for, and their replies come as events. A stuck disk costs the loop
 * at most `waitMs`, once. The worker's own time is the judge, not the round
 * trip: a reply that waited for a busy loop says nothing of the disk.
 *
 * Every call has a deadline, `timeoutMs` after it was made (the chat's
 * `STORE_TIMEOUT_MS`). A read not answered by then fails as unavailable. A
 * write waits for the lock only until its deadline and rolls back rather
 * than commit after it, so a send answered 503 because the lock was held has
 * stored nothing. Only a write already committing when time runs out (a
 * disk stalled in fsync) can land after its 503; it is then published, and
 * a retry with the same key gets it back (`created: false`).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { isUnavailable, type SqliteFileOptions } from './sqlite-file.ts';
import {
  type SqliteCall,
  type SqliteResults,
  SqliteThread,
  SqliteWorkerError,
} from './sqlite-thread.ts';
import {
  type AppendResult,
  type Message,
  type MessageStore,
  type NewMessage,
  type PrunePolicy,
  StoreUnavailableError,
} from './store.ts';

/**
 * What the store asks of its writer: a `SqliteThread` of its own, or, in a
 * cluster worker, the primary's one writer for every worker
 * (`cluster-writer.ts`).
 */
export interface SqliteWriter {
  request<C extends SqliteCall>(
    call: C,
    deadline: number,
    settleBy?: boolean,
  ): Promise<SqliteResults[C['op']]>;
  takeReplies(): void;
  awaitReplies(waitMs: number): boolean;
  readonly lastRunMs: number;
  opened(): Promise<void>;
  close(): Promise<void>;
}

export interface SqliteStoreOptions extends Pick<SqliteFileOptions, 'synchronous' | 'maxMb'> {
  /** How long a call may take, in milliseconds (`STORE_TIMEOUT_MS`). @default 2000 */
  timeoutMs?: number;
  /**
   * How long the event loop may wait for a write while writes are quick, in
   * milliseconds (`SQLITE_WAIT_MS`); 0 never waits. @default 0
   */
  waitMs?: number;
  /**
   * The writer, when it is not a thread of this store's own: the cluster's,
   * shared with the other workers. Its connection commits their writes too,
   * so `othersWrote` asks this store's reader instead.
   */
  writer?: (file: string, options: SqliteFileOptions) => SqliteWriter;
}

export class SqliteStore implements MessageStore {
  readonly kind = 'sqlite';
  readonly #writer: SqliteWriter;
  readonly #reader: SqliteWriter;
  /** The connection whose `data_version` tells others' commits: the writer, unless it is shared. */
  readonly #versions: SqliteWriter;
  readonly #timeoutMs: number;
  readonly #waitMs: number;
  /** Appends not yet answered. */
  #inFlight = 0;
  /** The end of this turn is booked to wait for the quick appends' replies. */
  #taking = false;
  /** The last end-of-turn wait ran out with quick appends unanswered. */
  #stalled = false;
  #closed = false;
  #dataVersion = -1;
  /**
   * Takes the writer's replies that have come as the process takes in a
   * request: a send stored while the loop served other requests is
   * acknowledged now, in this turn, not at the end of it.
   */
  readonly #onRequest = (): void => {
    if (this.#inFlight > 0) this.#writer.takeReplies();
  };

  /** `file` is a path, or `:memory:`. Nothing is opened before `init()`. */
  constructor(file: string, options: SqliteStoreOptions = {}) {
    this.#timeoutMs = options.timeoutMs ?? 2_000;
    this.#waitMs = options.waitMs ?? 0;
    const synchronous = options.synchronous ?? 'FULL';
    const writerOptions = { synchronous, maxMb: options.maxMb };
    const shared = options.writer !== undefined && file !== ':memory:';
    this.#writer = shared
      ? options.writer!(file, writerOptions)
      : new SqliteThread(file, writerOptions);
    this.#reader =
      file === ':memory:' ? this.#writer : new SqliteThread(file, { synchronous, readOnly: true });
    this.#versions = shared ? this.#reader : this.#writer;
  }

  async init(): Promise<void> {
    // The writer migrates; the reader opens once the schema is there.
    await this.#call(() => this.#writer.opened());
    await this.#call(() => this.#reader.opened());
    // Subscribed once for the store's life: a channel that gains and loses
    // its subscribers at each append would change shape under Node's own
    // request path.
    subscribe(REQUEST_START, this.#onRequest);
  }

  append(input: NewMessage): Promise<AppendResult> {
    if (this.#closed) return Promise.reject(closedError());
    // Sends stored meanwhile are acknowledged now, in this turn.
    if (this.#inFlight > 0) this.#writer.takeReplies();
    const quick = this.#quickNow();
    this.#inFlight += 1;
    const written = this.#call(() =>
      this.#writer.request({ op: 'append', inputs: [input] }, this.#deadline()),
    ).then(
      (results) => {
        this.#answered();
        return results[0]!;
      },
      (error: unknown) => {
        this.#answered();
        throw error;
      },
    );
    if (quick) this.#awaitAtEndOfTurn();
    return written;
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
   * stuck writer) answers yes. With the cluster's shared writer the reader
   * is asked, for whom every commit is another connection's, this process's
   * own too: the store watch then looks whenever anyone wrote.
   */
  async othersWrote(): Promise<boolean> {
    try {
      const version = await this.#call(() =>
        this.#versions.request({ op: 'dataVersion' }, this.#deadline(), true),
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
    unsubscribe(REQUEST_START, this.#onRequest);
    // One thread for both on `:memory:`.
    await Promise.all([...new Set([this.#writer, this.#reader])].map((thread) => thread.close()));
  }

  /** Whether the next append is to be waited for at the end of the turn (the class comment). */
  #quickNow(): boolean {
    return this.#waitMs > 0 && !this.#stalled && this.#writer.lastRunMs <= this.#waitMs;
  }

  #answered(): void {
    this.#inFlight -= 1;
    if (this.#inFlight === 0) this.#stalled = false;
  }

  /** At the end of this turn, waits at most `waitMs` for the appends' replies. */
  #awaitAtEndOfTurn(): void {
    if (this.#taking) return;
    this.#taking = true;
    setImmediate(() => {
      this.#taking = false;
      // Still unanswered after the wait: a stuck disk or a held lock. The
      // appends after are not waited for, until these are answered.
      if (!this.#writer.awaitReplies(this.#waitMs)) this.#stalled = true;
    });
  }

  #read<C extends SqliteCall>(call: C) {
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

/** Published by node:http for each request it reads, before its `request` event. */
export const REQUEST_START = 'http.server.request.start';

function closedError(cause?: unknown): StoreUnavailableError {
  return new StoreUnavailableError('SQLite is closed', { cause });
}
