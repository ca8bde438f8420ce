/**
 * The main thread's end of one SQLite worker thread (`sqlite-worker.ts`):
 * requests out, replies back, matched by id.
 *
 * The thread is started on first use and again after it dies (its pending
 * requests then fail as unavailable). It keeps the process alive only while
 * a request waits for it. Under tsx (development, tests) the worker loads
 * the TypeScript source through tsx's loader; the build (`dist/`) runs the
 * emitted JavaScript.
 *
 * Replies come on a port of their own, several to a message (the worker
 * answers all it took up at once), and the worker bumps a shared counter
 * after each message, so a caller may take the replies that have come
 * without waiting for their event (`takeReplies`, `receiveMessageOnPort`),
 * or wait for them for a bounded moment (`awaitReplies`, `Atomics.wait`).
 * A reply not taken so arrives as an event, like every other.
 */
import {
  MessageChannel,
  type MessagePort,
  receiveMessageOnPort,
  Worker,
} from 'node:worker_threads';
import type { SqliteFileOptions } from './sqlite-file.ts';
import {
  type AppendResult,
  type Message,
  type NewMessage,
  type PrunePolicy,
  StoreUnavailableError,
} from './store.ts';

/** What the main thread asks a worker, by operation. */
export type SqliteCall =
  | { op: 'open'; file: string; options: SqliteFileOptions }
  | { op: 'close' }
  | { op: 'append'; inputs: NewMessage[] }
  | { op: 'after'; room: string; since: number; limit: number }
  | { op: 'before'; room: string; before: number | undefined; limit: number }
  | { op: 'heads'; rooms: readonly string[] }
  | { op: 'prune'; policy: PrunePolicy }
  | { op: 'pruned'; room: string }
  | { op: 'dataVersion' }
  | { op: 'ping' }
  /**
   * The cluster's writer: serve the workers on a socket at `path` too
   * (`writer-socket.ts`), relaying others' messages at most every `relayBatchMs`.
   */
  | { op: 'listen'; path: string; relayBatchMs?: number };

/** What each operation answers. */
export interface SqliteResults {
  open: undefined;
  close: undefined;
  append: AppendResult[];
  after: Message[];
  before: Message[];
  heads: Map<string, number>;
  prune: number;
  pruned: number;
  dataVersion: number;
  ping: undefined;
  listen: undefined;
}

/** What the worker is handed when it starts. */
export interface SqliteWorkerData {
  /** Where the replies go, as arrays of `SqliteReply`. */
  replies: MessagePort;
  /** Bumped (and notified) after each message of replies. */
  posted: Int32Array;
}

/** A call on the wire: its id, and the `Date.now()` time after which the worker refuses it unrun. */
export type SqliteRequest = SqliteCall & { id: number; deadline: number };

export type SqliteReply =
  | {
      id: number;
      value: unknown;
      error?: undefined;
      /** How long it ran in the worker, in milliseconds. */
      ms: number;
    }
  | { id: number; error: { name: string; message: string; code: string | undefined } };

/** A call's failure as it crosses to the caller: its name, message and SQLite code. */
export function failed(id: number, error: unknown): SqliteReply {
  const { name, message, code } = error as { name?: unknown; message?: unknown; code?: unknown };
  return {
    id,
    error: {
      name: String(name ?? 'Error'),
      message: String(message ?? error),
      code: typeof code === 'string' ? code : undefined,
    },
  };
}

/** An error thrown in the worker, rebuilt on this side with its SQLite code. */
export class SqliteWorkerError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'SqliteWorkerError';
  }
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  timer: NodeJS.Timeout | undefined;
}

export class SqliteThread {
  readonly #open: Extract<SqliteCall, { op: 'open' }>;
  readonly #pending = new Map<number, Pending>();
  #worker: Worker | undefined;
  #replies: MessagePort | undefined;
  #posted: Int32Array | undefined;
  #opening: Promise<void> | undefined;
  #closed = false;
  #nextId = 0;
  /** How long the last request answered ran in the worker, in milliseconds. */
  #lastRunMs = 0;

  constructor(file: string, options: SqliteFileOptions) {
    this.#open = { op: 'open', file, options };
  }

  /**
   * Runs `call` in the worker. The worker refuses it unrun once `deadline`
   * has passed; with `settleBy`, this side also gives up at the deadline,
   * even when the worker is stuck and cannot answer at all.
   */
  request<C extends SqliteCall>(
    call: C,
    deadline: number,
    settleBy = false,
  ): Promise<SqliteResults[C['op']]> {
    if (this.#closed) return Promise.reject(new StoreUnavailableError('SQLite is closed'));
    return this.#send(this.#worker ?? this.#start(), call, deadline, settleBy);
  }

  /** Takes the replies that have come, now; never blocks. */
  takeReplies(): void {
    const replies = this.#replies;
    if (!replies || this.#pending.size === 0) return;
    this.#take(replies);
  }

  /**
   * Blocks this thread for at most `waitMs` until every request made is
   * answered, taking the replies as they come. True when none is left.
   */
  awaitReplies(waitMs: number): boolean {
    const posted = this.#posted;
    const replies = this.#replies;
    if (!posted || !replies) return this.#pending.size === 0;
    const until = performance.now() + waitMs;
    for (;;) {
      // Read before taking: a reply posted after the take changes it, so the wait returns at once.
      const seen = Atomics.load(posted, 0);
      this.#take(replies);
      const left = until - performance.now();
      if (this.#pending.size === 0 || left <= 0 || this.#replies !== replies) {
        return this.#pending.size === 0;
      }
      Atomics.wait(posted, 0, seen, left);
    }
  }

  /** How long the last request answered ran in the worker, in milliseconds. */
  get lastRunMs(): number {
    return this.#lastRunMs;
  }

  /** Starts the thread if it is not running; resolves once the file is open, or throws why not. */
  opened(): Promise<void> {
    if (this.#closed) return Promise.reject(new StoreUnavailableError('SQLite is closed'));
    if (!this.#worker) this.#start();
    return this.#opening!;
  }

  /** Closes the file, then ends the thread; later requests fail as unavailable. */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#closed = true;
    if (!worker) return;
    try {
      await this.#send(worker, { op: 'close' }, Date.now() + 5_000, true);
    } finally {
      this.#worker = undefined;
      this.#replies?.close();
      this.#replies = undefined;
      this.#posted = undefined;
      await worker.terminate();
    }
  }

  #start(): Worker {
    const { port1, port2 } = new MessageChannel();
    const posted = new Int32Array(new SharedArrayBuffer(4));
    const worker = startWorker({ replies: port2, posted }, [port2]);
    this.#worker = worker;
    this.#replies = port1;
    this.#posted = posted;
    worker.unref();
    port1.unref();
    port1.on('message', (replies: SqliteReply[]) => this.#onReplies(replies));
    worker.on('error', (error) => this.#onExit(worker, error));
    worker.on('exit', (code) => this.#onExit(worker, new Error(`exit code ${code}`)));
    // The port keeps order: the file is open before any request runs.
    this.#opening = this.#send(worker, this.#open, 0);
    this.#opening.catch(() => {}); // Requests after a failed open fail on their own.
    return worker;
  }

  #send<C extends SqliteCall>(
    worker: Worker,
    call: C,
    deadline: number,
    settleBy = false,
  ): Promise<SqliteResults[C['op']]> {
    const id = ++this.#nextId;
    return new Promise((resolve, reject) => {
      const timer = settleBy
        ? setTimeout(() => {
            this.#settled(id);
            reject(new StoreUnavailableError(`SQLite did not answer ${call.op} in time`));
          }, deadline - Date.now())
        : undefined;
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
      if (this.#pending.size === 1) {
        worker.ref();
        this.#replies?.ref();
      }
      worker.postMessage({ ...call, id, deadline } satisfies SqliteRequest);
    });
  }

  #take(replies: MessagePort): void {
    for (let next = receiveMessageOnPort(replies); next; next = receiveMessageOnPort(replies)) {
      this.#onReplies(next.message as SqliteReply[]);
    }
  }

  #onReplies(replies: SqliteReply[]): void {
    for (const reply of replies) this.#onReply(reply);
  }

  #onReply(reply: SqliteReply): void {
    const pending = this.#settled(reply.id);
    if (!pending) return; // Given up on at its deadline.
    if (reply.error) {
      pending.reject(new SqliteWorkerError(reply.error.message, reply.error.code));
    } else {
      this.#lastRunMs = reply.ms;
      pending.resolve(reply.value);
    }
  }

  #onExit(worker: Worker, cause: unknown): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    this.#replies?.close();
    this.#replies = undefined;
    this.#posted = undefined;
    for (const id of [...this.#pending.keys()]) {
      this.#settled(id)?.reject(new StoreUnavailableError('the SQLite thread stopped', { cause }));
    }
  }

  #settled(id: number): Pending | undefined {
    const pending = this.#pending.get(id);
    if (!pending) return undefined;
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    if (this.#pending.size === 0) {
      this.#worker?.unref();
      this.#replies?.unref();
    }
    return pending;
  }
}

function startWorker(workerData: SqliteWorkerData, transferList: MessagePort[]): Worker {
  const here = import.meta.url;
  const options = { workerData, transferList };
  if (!here.endsWith('.ts')) return new Worker(new URL('./sqlite-worker.js', here), options);
  // Source run by tsx or vitest: Node cannot load .ts in a new thread by
  // itself, so the thread registers tsx's loader first.
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./sqlite-worker.ts', here).href;
  const boot = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { ...options, eval: true });
}
