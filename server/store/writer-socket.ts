/**
 * The socket of the cluster's one SQLite writer (docs/design.md, "One
 * writer for the cluster"). In cluster mode the writer thread, in the
 * primary, listens on a Unix socket of its own (a named pipe on Windows),
 * and each worker sends its writes straight to it (`cluster-writer.ts`).
 * The primary's event loop is not on the send path: a send crosses the
 * worker's loop and the writer thread, as in one process, not the
 * primary's loop twice more.
 *
 * The frames are JSON lines (`json-lines.ts`). A worker's first frame,
 * `{ op: 'hello', id, relay }`, says whether it wants the relay, and is
 * answered once it is registered: every commit after that answer is
 * relayed to it. Its calls follow, with ids of its own. Back comes one
 * frame per turn, `{ replies, messages }`: the answers to its calls, and,
 * when it asked for the relay, the messages that the other workers' calls
 * committed, in commit order.
 *
 * The calls that came in one turn of this thread's loop, whoever sent
 * them, are served together (`Serve`, the thread's group commit), so two
 * workers' senders share one transaction and one fsync.
 *
 * The relay is batched as a busy room's answers are (`RELAY_BATCH_MS`): a
 * frame that would carry only others' messages goes at once when the
 * worker had none for that long, and otherwise waits out the rest of it,
 * with whatever else commits meanwhile. So a worker is woken for the
 * others' sends a few hundred times a second at most, not at each commit,
 * and its busy rooms hold their answers for `DELIVERY_BATCH_MS` anyway.
 * A frame with the worker's own replies goes at once, and carries what
 * waited: nothing is held behind a worker's acknowledgements.
 */
import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { readFrames, writeFrame } from './json-lines.ts';
import { failed, type SqliteReply, type SqliteRequest } from './sqlite-thread.ts';
import type { AppendResult, Message } from './store.ts';

/** Serves a run of calls; replies go out through `post`, which empties the array it is given. */
export type Serve = (requests: SqliteRequest[], post: (out: SqliteReply[]) => void) => void;

/** What a worker may ask here. Opening and closing the file, and listening, are the primary's. */
const WORKER_OPS: ReadonlySet<string> = new Set(['append', 'prune', 'ping']);

/** A call longer than this is broken: far past the largest append the chat accepts. */
const MAX_FRAME_CHARS = 8 * 1024 * 1024;

/**
 * A worker that leaves this much of its frames unread (frozen, swapped out)
 * is cut off rather than buffered for: it reconnects, and its store watch
 * finds what it missed.
 */
const MAX_UNREAD_BYTES = 16 * 1024 * 1024;

/** A call in the run: whose it is, and its id and op as the worker sent them. */
interface Route {
  peer: Peer;
  id: number;
  op: string;
}

/** A worker's end, as this thread sees it. */
interface Peer {
  socket: Socket;
  /** Its first frame came. */
  greeted: boolean;
  relay: boolean;
  replies: SqliteReply[];
  messages: Message[];
  /** When it was last sent others' messages (`performance.now()`). */
  relayedAt: number;
  /** Sends the messages that wait, at the end of the batch. */
  relayTimer: NodeJS.Timeout | undefined;
}

export interface WriterSocketOptions {
  /** Others' messages go to a worker at most this often, in milliseconds; 0: at each commit. */
  relayBatchMs?: number;
}

export class WriterSocket {
  readonly #peers = new Set<Peer>();
  #server: Server | undefined;
  #path: string | undefined;
  #listening: Promise<void> | undefined;
  #queue: Array<[Peer, SqliteRequest]> = [];
  #scheduled = false;
  #nextId = 0;

  readonly #relayBatchMs: number;

  constructor(
    private readonly serve: Serve,
    options: WriterSocketOptions = {},
  ) {
    this.#relayBatchMs = options.relayBatchMs ?? 0;
  }

  /** Listens on `path` (once: asked again, it says when the first listen did). */
  listen(path: string): Promise<void> {
    if (this.#listening) {
      return this.#path === path
        ? this.#listening
        : Promise.reject(new Error(`the writer already listens on ${this.#path}`));
    }
    this.#path = path;
    // A socket file left by a thread that died: the folder is the primary's own.
    if (process.platform !== 'win32') rmSync(path, { force: true });
    const server = createServer((socket) => this.#accept(socket));
    this.#server = server;
    this.#listening = new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#listening.catch(() => {
      this.#listening = undefined;
      this.#server = undefined;
    });
    return this.#listening;
  }

  /** Stops listening and cuts every worker off. */
  close(): void {
    this.#server?.close();
    this.#server = undefined;
    this.#listening = undefined;
    for (const peer of this.#peers) {
      clearTimeout(peer.relayTimer);
      peer.socket.destroy();
    }
    this.#peers.clear();
  }

  #accept(socket: Socket): void {
    const peer: Peer = {
      socket,
      greeted: false,
      relay: false,
      replies: [],
      messages: [],
      relayedAt: Number.NEGATIVE_INFINITY,
      relayTimer: undefined,
    };
    this.#peers.add(peer);
    socket.on('close', () => {
      clearTimeout(peer.relayTimer);
      this.#peers.delete(peer);
    });
    socket.on('error', () => {}); // Closed next: the worker reconnects.
    readFrames(socket, (frame) => this.#onFrame(peer, frame), MAX_FRAME_CHARS);
  }

  #onFrame(peer: Peer, frame: unknown): void {
    if (!peer.greeted) {
      const hello = frame as { op?: unknown; id?: unknown; relay?: unknown } | null;
      if (hello?.op !== 'hello' || typeof hello.id !== 'number') {
        peer.socket.destroy(new Error('a worker that did not say hello'));
        return;
      }
      peer.greeted = true;
      peer.relay = hello.relay === true;
      peer.replies.push({ id: hello.id, value: undefined, ms: 0 });
      this.#flush();
      return;
    }
    const request = frame as SqliteRequest;
    if (typeof request?.id !== 'number' || !WORKER_OPS.has(request.op)) {
      peer.socket.destroy(new Error('a call a worker may not make'));
      return;
    }
    this.#queue.push([peer, request]);
    if (this.#scheduled) return;
    this.#scheduled = true;
    // After this turn's reads: every worker whose calls came meanwhile is in the run.
    setImmediate(() => this.#drain());
  }

  #drain(): void {
    this.#scheduled = false;
    const queue = this.#queue;
    this.#queue = [];
    // The workers' ids may clash: each call runs under one of this thread's, and is answered under its own.
    const routes = new Map<number, Route>();
    const requests = queue.map(([peer, request]) => {
      const id = ++this.#nextId;
      routes.set(id, { peer, id: request.id, op: request.op });
      request.id = id;
      return request;
    });
    const post = (out: SqliteReply[]) => {
      for (const reply of out.splice(0)) {
        const route = routes.get(reply.id);
        if (!route) continue;
        routes.delete(reply.id);
        const { peer } = route;
        // Relayed even when its worker is gone: the others must not miss what it committed.
        if (peer.relay && route.op === 'append' && !reply.error) {
          this.#relay(peer, reply.value as AppendResult[]);
        }
        if (peer.socket.destroyed) continue;
        reply.id = route.id;
        peer.replies.push(reply);
      }
      this.#flush();
    };
    try {
      this.serve(requests, post);
    } catch (error) {
      // A call the thread could not even take apart (a worker's bug): its run fails, the thread lives on.
      post([...routes.keys()].map((id) => failed(id, error)));
    }
  }

  #relay(from: Peer, results: readonly AppendResult[]): void {
    for (const peer of this.#peers) {
      if (peer === from || !peer.relay) continue;
      for (const result of results) if (result.created) peer.messages.push(result.message);
    }
  }

  /** One frame to each worker that has news, but others' messages alone only once their batch is due. */
  #flush(): void {
    const now = performance.now();
    for (const peer of this.#peers) {
      if (peer.replies.length === 0 && peer.messages.length === 0) continue;
      if (peer.replies.length === 0) {
        const wait = peer.relayedAt + this.#relayBatchMs - now;
        if (wait > 0) {
          peer.relayTimer ??= setTimeout(() => {
            peer.relayTimer = undefined;
            peer.relayedAt = Number.NEGATIVE_INFINITY;
            this.#flush();
          }, wait);
          continue;
        }
      }
      clearTimeout(peer.relayTimer);
      peer.relayTimer = undefined;
      if (peer.socket.writableLength > MAX_UNREAD_BYTES) {
        peer.socket.destroy();
        continue;
      }
      const frame: { replies?: SqliteReply[]; messages?: Message[] } = {};
      if (peer.replies.length > 0) frame.replies = peer.replies;
      if (peer.messages.length > 0) {
        frame.messages = peer.messages;
        peer.relayedAt = now;
      }
      writeFrame(peer.socket, frame);
      peer.replies = [];
      peer.messages = [];
    }
  }
}
