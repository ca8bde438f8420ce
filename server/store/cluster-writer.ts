/**
 * One SQLite writer for the whole cluster, in the primary (docs/design.md,
 * "One writer for the cluster").
 *
 * SQLite has one write lock per file. Two workers that each had a writer
 * thread took turns at it: each commit carried only its own worker's
 * senders, each fsync served half as many, and each writer found its page
 * cache void after the other's commit. So in cluster mode a worker's store
 * keeps its own reader thread (reads run beside a write in WAL), and sends
 * its writes over IPC to the primary, whose one writer thread
 * (`sqlite-thread.ts`) group-commits every worker's appends together.
 *
 * The primary answers each worker's calls in one IPC message per turn, and,
 * for workers that asked (`relay`: their bus is the cluster's IPC, no
 * Redis), sends each message it committed to every other such worker in
 * the same turn, in commit order. So the relay is part of the commit: the
 * worker does not publish its own messages again (`ClusterBus`), and a
 * worker that dies after its commit loses nobody the message.
 *
 * Deadlines are the store's as before: the primary's writer refuses a call
 * whose deadline passed, and this side gives up on a call a moment after
 * its deadline even when the primary cannot answer at all (stopped,
 * frozen), so nothing waits on it for good and the calls held are bounded.
 */
import type { Worker } from 'node:cluster';
import { type IpcEndpoint, sendIpc } from '../bus/cluster-ipc.ts';
import type { SqliteFileOptions } from './sqlite-file.ts';
import type { SqliteWriter } from './sqlite-store.ts';
import {
  failed,
  type SqliteCall,
  type SqliteReply,
  type SqliteResults,
  SqliteThread,
  SqliteWorkerError,
} from './sqlite-thread.ts';
import type { Message } from './store.ts';
import { StoreUnavailableError } from './store.ts';

/** How long after its deadline a call still waits for the primary: its answer may be on the way. */
const LATE_MS = 1_000;
/** How long a worker waits for the primary to open the file (it may wait for another process's lock). */
const OPEN_MS = 30_000;

/** A worker's call, by IPC, to the primary's writer. */
export interface WriterCall {
  lpchat: 'sqlite';
  id: number;
  call: SqliteCall;
  deadline: number;
  /** Sent with `open`: the primary is to relay this worker's commits to the others that ask. */
  relay?: boolean;
}

/** The primary's answers to one worker's calls, several to a message. */
export interface WriterReplies {
  lpchat: 'sqlite-replies';
  replies: SqliteReply[];
}

/** The worker's side of the IPC channel: `process` in a cluster worker. */
export type WriterChannel = IpcEndpoint & NodeJS.EventEmitter;

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  timer: NodeJS.Timeout;
}

/** A worker's writer: `SqliteThread`'s calls, run by the primary's thread. */
export class ClusterWriter implements SqliteWriter {
  readonly #pending = new Map<number, Pending>();
  readonly #open: { call: Extract<SqliteCall, { op: 'open' }>; relay: boolean };
  #opening: Promise<void> | undefined;
  #nextId = 0;
  #lastRunMs = 0;
  #closed = false;
  readonly #onIpc = (raw: unknown): void => {
    const message = raw as Partial<WriterReplies> | null;
    if (message?.lpchat !== 'sqlite-replies' || !Array.isArray(message.replies)) return;
    for (const reply of message.replies) this.#onReply(reply);
  };
  readonly #onDisconnect = (): void => {
    for (const id of [...this.#pending.keys()]) {
      this.#settled(id)?.reject(new StoreUnavailableError('the cluster primary is gone'));
    }
  };

  constructor(
    file: string,
    options: SqliteFileOptions,
    relay: boolean,
    private readonly channel: WriterChannel = process,
  ) {
    this.#open = { call: { op: 'open', file, options }, relay };
    channel.on('message', this.#onIpc);
    channel.on('disconnect', this.#onDisconnect);
  }

  request<C extends SqliteCall>(
    call: C,
    deadline: number,
    settleBy = false,
  ): Promise<SqliteResults[C['op']]> {
    if (this.#closed) return Promise.reject(new StoreUnavailableError('SQLite is closed'));
    return this.#send(call, deadline, settleBy ? 0 : LATE_MS);
  }

  /** The replies come as IPC events: there is nothing to take early. */
  takeReplies(): void {}

  /** An IPC channel cannot be waited on synchronously: true only when nothing is left. */
  awaitReplies(_waitMs: number): boolean {
    return this.#pending.size === 0;
  }

  get lastRunMs(): number {
    return this.#lastRunMs;
  }

  opened(): Promise<void> {
    if (this.#closed) return Promise.reject(new StoreUnavailableError('SQLite is closed'));
    this.#opening ??= this.#send(this.#open.call, Date.now() + OPEN_MS, 0, this.#open.relay);
    return this.#opening;
  }

  /** The file stays open in the primary, for the other workers: this side only stops. */
  async close(): Promise<void> {
    this.#closed = true;
    this.channel.off('message', this.#onIpc);
    this.channel.off('disconnect', this.#onDisconnect);
    for (const id of [...this.#pending.keys()]) {
      this.#settled(id)?.reject(new StoreUnavailableError('SQLite is closed'));
    }
  }

  #send<C extends SqliteCall>(
    call: C,
    deadline: number,
    lateMs: number,
    relay?: boolean,
  ): Promise<SqliteResults[C['op']]> {
    const id = ++this.#nextId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => {
          this.#settled(id);
          reject(
            new StoreUnavailableError(`the cluster primary did not answer ${call.op} in time`),
          );
        },
        Math.max(0, deadline - Date.now()) + lateMs,
      );
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
      const sent: WriterCall = { lpchat: 'sqlite', id, call, deadline };
      if (relay) sent.relay = true;
      if (!sendIpc(this.channel, sent)) {
        this.#settled(id);
        reject(new StoreUnavailableError('no IPC channel to the cluster primary'));
      }
    });
  }

  #onReply(reply: SqliteReply): void {
    const pending = this.#settled(reply.id);
    if (!pending) return; // Given up on after its deadline.
    if (reply.error) {
      const { name, message, code } = reply.error;
      pending.reject(
        name === 'StoreUnavailableError'
          ? new StoreUnavailableError(message)
          : new SqliteWorkerError(message, code),
      );
    } else {
      this.#lastRunMs = reply.ms;
      pending.resolve(reply.value);
    }
  }

  #settled(id: number): Pending | undefined {
    const pending = this.#pending.get(id);
    if (!pending) return undefined;
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    return pending;
  }
}

/** The primary's end: one writer thread per file, for every worker's `ClusterWriter`. */
export class ClusterWriters {
  readonly #threads = new Map<string, SqliteThread>();
  /** Each worker's file, from its `open`. */
  readonly #threadOf = new Map<Worker, SqliteThread>();
  readonly #relaying = new Set<Worker>();
  readonly #replies = new Map<Worker, SqliteReply[]>();
  readonly #relayed = new Map<Worker, Message[]>();
  #flushing = false;
  #closed = false;

  /** A worker's call: run on its file's thread, answered at the end of the turn it is answered in. */
  serve(from: Worker, raw: WriterCall): void {
    const { id, call, deadline } = raw;
    if (call.op === 'open') {
      this.#openFor(from, call, raw.relay === true).then(
        () => this.#answer(from, { id, value: undefined, ms: 0 }),
        (error: unknown) => this.#answer(from, failed(id, error)),
      );
      return;
    }
    const thread = this.#threadOf.get(from);
    if (this.#closed || !thread) {
      this.#answer(from, failed(id, new StoreUnavailableError('the cluster writer is not open')));
      return;
    }
    // The file stays open for the other workers: a worker's `close` only ends its side.
    if (call.op === 'close') {
      this.#answer(from, { id, value: undefined, ms: 0 });
      return;
    }
    thread.request(call, deadline).then(
      (value) => {
        this.#answer(from, { id, value, ms: thread.lastRunMs });
        if (call.op === 'append' && this.#relaying.has(from)) {
          this.#relay(from, value as SqliteResults['append']);
        }
      },
      (error: unknown) => this.#answer(from, failed(id, error)),
    );
  }

  /** A worker is gone: nothing more is sent to it. */
  forget(worker: Worker): void {
    this.#threadOf.delete(worker);
    this.#relaying.delete(worker);
    this.#replies.delete(worker);
    this.#relayed.delete(worker);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const threads = [...this.#threads.values()];
    this.#threads.clear();
    this.#threadOf.clear();
    await Promise.allSettled(threads.map((thread) => thread.close()));
  }

  async #openFor(
    worker: Worker,
    call: Extract<SqliteCall, { op: 'open' }>,
    relay: boolean,
  ): Promise<void> {
    if (this.#closed) throw new StoreUnavailableError('the cluster writer is closed');
    let thread = this.#threads.get(call.file);
    if (!thread) {
      thread = new SqliteThread(call.file, { ...call.options, readOnly: false });
      this.#threads.set(call.file, thread);
    }
    this.#threadOf.set(worker, thread);
    if (relay) this.#relaying.add(worker);
    else this.#relaying.delete(worker);
    await thread.opened();
  }

  #relay(from: Worker, results: SqliteResults['append']): void {
    for (const worker of this.#relaying) {
      if (worker === from) continue;
      for (const result of results) {
        if (result.created) pushTo(this.#relayed, worker, result.message);
      }
    }
    this.#flushSoon();
  }

  #answer(to: Worker, reply: SqliteReply): void {
    pushTo(this.#replies, to, reply);
    this.#flushSoon();
  }

  /**
   * The replies of one group commit resolve together: gathered until the
   * microtasks run out, they leave in one IPC message per worker (one
   * write, one parse), the relay with them.
   */
  #flushSoon(): void {
    if (this.#flushing) return;
    this.#flushing = true;
    setImmediate(() => {
      this.#flushing = false;
      for (const [worker, replies] of this.#replies) {
        sendIpc(worker, { lpchat: 'sqlite-replies', replies } satisfies WriterReplies);
      }
      this.#replies.clear();
      for (const [worker, messages] of this.#relayed) {
        sendIpc(worker, { lpchat: 'messages', messages });
      }
      this.#relayed.clear();
    });
  }
}

function pushTo<K, V>(lists: Map<K, V[]>, key: K, value: V): void {
  const list = lists.get(key);
  if (list) list.push(value);
  else lists.set(key, [value]);
}
