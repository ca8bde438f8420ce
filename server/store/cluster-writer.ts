/**
 * One SQLite writer for the whole cluster, in the primary (docs/design.md,
 * "One writer for the cluster").
 *
 * SQLite has one write lock per file. Two workers that each had a writer
 * thread took turns at it: each commit carried only its own worker's
 * senders, each fsync served half as many, and each writer found its page
 * cache void after the other's commit. So in cluster mode a worker's store
 * keeps its own reader thread (reads run beside a write in WAL), and sends
 * its writes to the primary's one writer thread (`sqlite-thread.ts`), which
 * group-commits every worker's appends together.
 *
 * A worker asks the primary over IPC to open the file; the primary starts
 * the thread, which listens on a socket of its own (`writer-socket.ts`),
 * and answers with its path. The worker's writes then go straight to the
 * thread on that socket, not through the primary's event loop. For workers
 * that asked (`relay`: their bus is the cluster's IPC, no Redis), the
 * thread sends each message it committed to every other such worker in the
 * same turn, in commit order. So the relay is part of the commit: the
 * worker does not publish its own messages again (`ClusterBus`), and a
 * worker that dies after its commit loses nobody the message.
 *
 * Deadlines are the store's as before: the writer refuses a call whose
 * deadline passed, and this side gives up on a call a moment after its
 * deadline even when the writer cannot answer at all (the primary stopped,
 * frozen), so nothing waits on it for good and the calls held are bounded.
 * A socket that closes (the thread died, the primary is gone) fails the
 * calls on it as unavailable; the next call asks the primary to open again.
 */
import type { Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type IpcEndpoint,
  sendIpc,
  type WriterCall,
  type WriterReplies,
} from '../bus/cluster-ipc.ts';
import { readFrames, writeFrame } from './json-lines.ts';
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

/** How long after its deadline a call still waits for the writer: its answer may be on the way. */
const LATE_MS = 1_000;
/** How long a worker waits for the primary to open the file (it may wait for another process's lock). */
const OPEN_MS = 30_000;
/** A frame from the writer longer than this is broken (a reply carries at most one page of messages). */
const MAX_FRAME_CHARS = 64 * 1024 * 1024;
/**
 * Calls written that the writer has not read, at most: past it (a primary
 * frozen for long, while sends keep coming and failing) the socket is
 * dropped rather than grown, and the next call connects again.
 */
export const MAX_UNSENT_BYTES = 16 * 1024 * 1024;

/** What the writer sends a worker on the socket, once a turn (`writer-socket.ts`). */
interface WriterFrame {
  replies?: SqliteReply[];
  messages?: Message[];
}

/** The worker's side of the IPC channel: `process` in a cluster worker. */
export type WriterChannel = IpcEndpoint & NodeJS.EventEmitter;

/**
 * Where a worker's writer hands the messages that the other workers
 * committed (the relay), for the worker's bus (`ClusterBus`).
 */
export class StoreRelay {
  readonly #listeners: Array<(messages: readonly Message[]) => void> = [];

  on(listener: (messages: readonly Message[]) => void): void {
    this.#listeners.push(listener);
  }

  off(listener: (messages: readonly Message[]) => void): void {
    const at = this.#listeners.indexOf(listener);
    if (at !== -1) this.#listeners.splice(at, 1);
  }

  emit(messages: readonly Message[]): void {
    for (const listener of this.#listeners) listener(messages);
  }
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  timer: NodeJS.Timeout;
}

/** A worker's writer: `SqliteThread`'s calls, run by the primary's thread. */
export class ClusterWriter implements SqliteWriter {
  readonly #pending = new Map<number, Pending>();
  readonly #open: Extract<SqliteCall, { op: 'open' }>;
  readonly #relay: StoreRelay | undefined;
  /** The connected socket to the writer, while there is one or one is being made. */
  #link: Promise<Socket> | undefined;
  #socket: Socket | undefined;
  /** Sockets given up on: their calls have failed, and their late close changes nothing. */
  readonly #dropped = new WeakSet<Socket>();
  #opened: Promise<void> | undefined;
  #nextId = 0;
  #lastRunMs = 0;
  #closed = false;
  readonly #onIpc = (raw: unknown): void => {
    const message = raw as Partial<WriterReplies> | null;
    if (message?.lpchat !== 'sqlite-replies' || !Array.isArray(message.replies)) return;
    for (const reply of message.replies) this.#onReply(reply);
  };
  readonly #onDisconnect = (): void => {
    if (this.#socket) this.#drop(this.#socket, 'the cluster primary is gone');
    else this.#failAll('the cluster primary is gone');
  };

  /** `relay`: the writer is to send this worker the other workers' messages, which go there. */
  constructor(
    file: string,
    options: SqliteFileOptions,
    relay: StoreRelay | undefined,
    private readonly channel: WriterChannel = process,
  ) {
    this.#open = { op: 'open', file, options };
    this.#relay = relay;
    channel.on('message', this.#onIpc);
    channel.on('disconnect', this.#onDisconnect);
  }

  request<C extends SqliteCall>(
    call: C,
    deadline: number,
    settleBy = false,
  ): Promise<SqliteResults[C['op']]> {
    if (this.#closed) return Promise.reject(new StoreUnavailableError('SQLite is closed'));
    const id = ++this.#nextId;
    const answered = this.#pend<SqliteResults[C['op']]>(
      id,
      call.op,
      deadline,
      settleBy ? 0 : LATE_MS,
    );
    const socket = this.#socket;
    if (socket && socket.writableLength > MAX_UNSENT_BYTES) {
      this.#drop(socket, 'the cluster writer has not read its calls');
    } else if (socket) {
      writeFrame(socket, { ...call, id, deadline });
    } else {
      this.#linked().then(
        (linked) => {
          if (this.#pending.has(id)) writeFrame(linked, { ...call, id, deadline });
        },
        (error: unknown) => this.#settled(id)?.reject(unavailable(error)),
      );
    }
    return answered;
  }

  /** The replies come as socket events: there is nothing to take early. */
  takeReplies(): void {}

  /** A socket cannot be waited on synchronously: true only when nothing is left. */
  awaitReplies(_waitMs: number): boolean {
    return this.#pending.size === 0;
  }

  get lastRunMs(): number {
    return this.#lastRunMs;
  }

  opened(): Promise<void> {
    if (this.#closed) return Promise.reject(new StoreUnavailableError('SQLite is closed'));
    this.#opened ??= this.#linked().then(() => {});
    return this.#opened;
  }

  /** The file stays open in the primary, for the other workers: this side only stops. */
  async close(): Promise<void> {
    this.#closed = true;
    this.channel.off('message', this.#onIpc);
    this.channel.off('disconnect', this.#onDisconnect);
    if (this.#socket) this.#drop(this.#socket, 'SQLite is closed');
    this.#failAll('SQLite is closed');
  }

  /** The socket to the writer: the one there is, or a new one, after asking the primary to open. */
  #linked(): Promise<Socket> {
    if (this.#link) return this.#link;
    const link = this.#connect().catch((error: unknown) => {
      if (this.#link === link) this.#link = undefined;
      throw error;
    });
    this.#link = link;
    return link;
  }

  async #connect(): Promise<Socket> {
    const id = ++this.#nextId;
    const opened = this.#pend<{ socket: string }>(id, 'open', Date.now() + OPEN_MS, 0);
    if (!sendIpc(this.channel, { lpchat: 'sqlite', id, call: this.#open, deadline: 0 })) {
      this.#settled(id)?.reject(new StoreUnavailableError('no IPC channel to the cluster primary'));
    }
    const { socket: path } = await opened;
    const socket = await new Promise<Socket>((resolve, reject) => {
      const connecting = createConnection(path);
      connecting.once('connect', () => {
        connecting.off('error', reject);
        resolve(connecting);
      });
      connecting.once('error', reject);
    });
    if (this.#closed) {
      socket.destroy();
      throw new StoreUnavailableError('SQLite is closed');
    }
    // Only a pending call keeps the process: the IPC channel does the rest.
    socket.unref();
    socket.setNoDelay(true);
    socket.on('error', () => {}); // Closed next.
    socket.on('close', () => this.#drop(socket, 'the cluster writer closed its socket'));
    readFrames(socket, (frame) => this.#onFrame(frame as WriterFrame), MAX_FRAME_CHARS);
    // Answered once the writer has this worker down for the relay: no later commit misses it.
    const hello = ++this.#nextId;
    const greeted = this.#pend(hello, 'hello', Date.now() + OPEN_MS, 0);
    writeFrame(socket, { op: 'hello', id: hello, relay: this.#relay !== undefined });
    await greeted;
    this.#socket = socket;
    return socket;
  }

  /** Gives `socket` up, once: every call waiting fails as unavailable, and the next call connects anew. */
  #drop(socket: Socket, why: string): void {
    if (this.#dropped.has(socket)) return;
    this.#dropped.add(socket);
    if (this.#socket === socket) this.#socket = undefined;
    this.#link = undefined;
    socket.destroy();
    this.#failAll(why);
  }

  #onFrame(frame: WriterFrame): void {
    if (frame.messages && this.#relay) this.#relay.emit(frame.messages);
    if (frame.replies) for (const reply of frame.replies) this.#onReply(reply);
  }

  #pend<T>(id: number, op: string, deadline: number, lateMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          this.#settled(id);
          reject(new StoreUnavailableError(`the cluster writer did not answer ${op} in time`));
        },
        Math.max(0, deadline - Date.now()) + lateMs,
      );
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
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

  #failAll(why: string): void {
    for (const id of [...this.#pending.keys()]) {
      this.#settled(id)?.reject(new StoreUnavailableError(why));
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

function unavailable(error: unknown): unknown {
  if (error instanceof StoreUnavailableError || error instanceof SqliteWorkerError) return error;
  return new StoreUnavailableError('cannot reach the cluster writer', { cause: error });
}

/**
 * The primary's end: one writer thread per file, listening on its socket
 * for every worker's `ClusterWriter`.
 */
export class ClusterWriters {
  readonly #threads = new Map<string, { thread: SqliteThread; path: string }>();
  readonly #relayBatchMs: number;
  /** The folder of the sockets, the primary's own (mode 0700): no other user can connect. */
  #folder: string | undefined;
  #closed = false;

  /** `relayBatchMs`: others' messages go to a worker at most this often (`RELAY_BATCH_MS`). */
  constructor(options: { relayBatchMs?: number } = {}) {
    this.#relayBatchMs = options.relayBatchMs ?? 0;
  }

  /** A worker's `open`: the file's writer is started and listening, and the worker is told where. */
  serve(from: Worker, raw: WriterCall): void {
    const { id, call } = raw;
    const answer = (reply: SqliteReply) =>
      sendIpc(from, { lpchat: 'sqlite-replies', replies: [reply] } satisfies WriterReplies);
    if (call?.op !== 'open') {
      answer(failed(id, new StoreUnavailableError('the primary only opens the writer')));
      return;
    }
    this.#openFile(call).then(
      (socket) => answer({ id, value: { socket }, ms: 0 }),
      (error: unknown) => answer(failed(id, error)),
    );
  }

  async close(): Promise<void> {
    this.#closed = true;
    const threads = [...this.#threads.values()].map(({ thread }) => thread);
    this.#threads.clear();
    await Promise.allSettled(threads.map((thread) => thread.close()));
    if (this.#folder) rmSync(this.#folder, { recursive: true, force: true });
    this.#folder = undefined;
  }

  async #openFile(call: Extract<SqliteCall, { op: 'open' }>): Promise<string> {
    if (this.#closed) throw new StoreUnavailableError('the cluster writer is closed');
    let writer = this.#threads.get(call.file);
    if (!writer) {
      const thread = new SqliteThread(call.file, { ...call.options, readOnly: false });
      writer = { thread, path: this.#socketPath() };
      this.#threads.set(call.file, writer);
    }
    // Both start the thread again if it died: the file reopened, the socket listened on again.
    await writer.thread.opened();
    await writer.thread.request(
      { op: 'listen', path: writer.path, relayBatchMs: this.#relayBatchMs },
      Date.now() + OPEN_MS,
    );
    return writer.path;
  }

  #socketPath(): string {
    const name = `writer-${this.#threads.size}`;
    if (process.platform === 'win32') {
      // A named pipe has no folder to guard it: an unguessable name instead.
      return `\\\\.\\pipe\\lpchat-${process.pid}-${name}-${randomBytes(16).toString('hex')}`;
    }
    // A socket's path has room for about 100 bytes: a long TMPDIR (macOS) falls back to /tmp.
    const base = Buffer.byteLength(tmpdir()) > 64 ? '/tmp' : tmpdir();
    this.#folder ??= mkdtempSync(join(base, 'lpchat-'));
    return join(this.#folder, `${name}.sock`);
  }
}
