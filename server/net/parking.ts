/**
 * Parking: a long-poll that waits in a quiet room gives its connection's
 * HTTP parser back to Node while it waits (docs/design.md, "Memory per
 * waiting poll").
 *
 * Node keeps one parser per connection for the connection's whole life, a
 * native object outside the JavaScript heap. Since Node 24 it is the
 * largest single part of what a waiting poll costs, yet a waiting poll
 * needs none: its request has been read whole, and nothing may come behind
 * it (pipelining.ts). So once the poll's request is complete the parser is
 * freed as Node frees it for an upgraded connection, and the socket is
 * "parked": it holds the answer to come and nothing else. Node's own
 * per-connection set-up (`http._connectionListener`, what Node runs for
 * every new connection) gives it a parser again when the next request's
 * first bytes arrive, so keep-alive works as before, and an idle
 * connection is not counted as one whose headers are late.
 *
 * A new connection starts parked too (`adopt`): Node's set-up runs with its
 * first bytes, not as it opens. Clients that open many connections before
 * they write (a load generator, a flood of silent sockets) then hold no
 * parser each, and one freed by a parked poll goes to the next connection
 * that speaks. Silence past the headers timeout gets Node's 408.
 *
 * While parked:
 * - bytes from the client are a request behind the poll: refused as
 *   pipelining.ts refuses one (the poll answered with the refusal, then the
 *   request, and the connection closes);
 * - the client's end closes the connection, as Node's server does;
 * - Node's keep-alive timeout, once the answer is written, closes it too.
 *
 * Freeing the parser and setting the connection up again cost a few
 * microseconds a poll, so the hub parks only the polls of rooms that have
 * been quiet for a while (`POLL_PARK_QUIET_MS`), whose polls wait long.
 *
 * This leans on Node's internals: the names of the listeners Node's server
 * puts on each socket (the same in Node 22, 24 and 26, which the suite runs on). Parking checks they are
 * all there before it touches a socket, and leaves the socket as it is
 * (parser and all) when they are not.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';

// biome-ignore lint/suspicious/noExplicitAny: what `EventEmitter.listeners` returns
type Listener = (...args: any[]) => void;

const require = createRequire(import.meta.url);
/** How Node sets up each new connection of an HTTP server (exported for such uses). */
const { _connectionListener: connectionListener } = require('node:http') as {
  _connectionListener?: (this: Server, socket: Socket) => void;
};
/** How Node itself lets go of a connection's parser (back to its pool, or closed). */
const { freeParser } = require('node:_http_common') as {
  freeParser?: (parser: unknown, req: unknown, socket: unknown) => void;
};

/** What Node's server listens to on each connection, by event and function name. */
const NODE_LISTENERS = [
  ['data', 'bound socketOnData'],
  ['end', 'bound socketOnEnd'],
  ['drain', 'bound socketOnDrain'],
  ['timeout', 'socketOnTimeout'],
  ['resume', 'onSocketResume'],
  ['pause', 'onSocketPause'],
] as const;
/** Kept while parked (they hold no parser), replaced when Node sets the connection up again. */
const NODE_KEPT = [
  ['close', 'bound socketOnClose'],
  ['error', 'socketOnError'],
] as const;

interface ParkedSocket extends Socket {
  parser?: unknown;
  _handle?: { _consumed?: boolean } | null;
  /** The poll the socket waits with, while it waits; null while idle (before its first request, or after an answer). */
  [PARKED]?: ServerResponse | null;
  /** Not one byte has come yet: the socket's silence is timed as late headers. */
  [SILENT]?: boolean;
}
const PARKED = Symbol('parked');
const SILENT = Symbol('silent');

/** The HTTP server Node set the connection up for (`socket.server`). */
const serverOf = (socket: Socket): Server | undefined =>
  (socket as unknown as { server?: Server }).server;

export interface ParkingOptions {
  /** A request came behind a parked poll: refuse both, as pipelining.ts does. */
  onPipelined(poll: ServerResponse, socket: Socket): void;
}

export interface Parking {
  /**
   * Takes over the set-up of `server`'s new connections: each starts
   * parked, and gets its parser with its first bytes. One that sends none
   * within `headersTimeoutMs` gets the 408 Node's headers timeout gives.
   */
  adopt(server: Server, headersTimeoutMs: number): void;
  /** Parks the poll's connection once the read that brought it is over, if the poll still waits then. */
  park(res: ServerResponse): void;
  /** Connections parked now, waiting or idle. */
  readonly parked: number;
  /** Closes the parked connections that wait for no answer (shutdown). */
  closeIdle(): void;
}

const supported = typeof connectionListener === 'function' && typeof freeParser === 'function';

export function createParking(options: ParkingOptions): Parking {
  const parked = new Set<ParkedSocket>();
  let due: ServerResponse[] = [];

  function onData(this: ParkedSocket, chunk: Buffer): void {
    const poll = this[PARKED];
    if (poll === undefined) return;
    if (poll !== null) {
      // Behind a waiting poll: nothing more is read, both are refused.
      this.pause();
      release(this);
      options.onPipelined(poll, this);
      return;
    }
    resume(this, chunk);
  }

  function onEnd(this: ParkedSocket): void {
    this.destroy();
  }

  function onTimeout(this: ParkedSocket): void {
    if (this[SILENT]) {
      // Nothing came within the headers timeout: what Node's own check raises.
      release(this);
      const late = Object.assign(new Error('request timeout'), {
        code: 'ERR_HTTP_REQUEST_TIMEOUT',
      });
      if (!serverOf(this)?.emit('clientError', late, this)) this.destroy();
      return;
    }
    // Node's keep-alive timeout (set when the answer was written): as Node does it.
    if (!serverOf(this)?.emit('timeout', this)) this.destroy();
  }

  /** Hold `socket` parked and idle: it has no parser, and its next bytes give it one. */
  function hold(socket: ParkedSocket): void {
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('timeout', onTimeout);
    socket.on('close', onClose);
    parked.add(socket);
  }

  function onClose(this: ParkedSocket): void {
    parked.delete(this);
  }

  /** The answer is written (Node's own `finish` listener ran first): the connection idles, parked. */
  function onFinish(this: ServerResponse): void {
    const socket = (this as ServerResponse & { req: IncomingMessage }).req.socket as ParkedSocket;
    if (socket[PARKED] !== this) return;
    // `Connection: close` (shutdown, a refusal): Node closes the connection itself.
    if ((this as ServerResponse & { _last?: boolean })._last || socket.destroyed) {
      release(socket);
      return;
    }
    socket[PARKED] = null;
  }

  function parkNow(res: ServerResponse): void {
    const req = (res as ServerResponse & { req: IncomingMessage }).req;
    const socket = req.socket as ParkedSocket;
    if (res.writableEnded || res.destroyed || socket.destroyed || !req.complete) return;
    // Only the connection's current answer, with a parser Node set up.
    if ((socket as ParkedSocket & { _httpMessage?: unknown })._httpMessage !== res) return;
    if (!socket.parser || !serverOf(socket) || socket[PARKED] !== undefined) return;
    const found: Array<[string, Listener]> = [];
    for (const [event, name] of NODE_LISTENERS) {
      const listener = socket.listeners(event).find((fn) => fn.name === name);
      if (!listener) return;
      found.push([event, listener as Listener]);
    }
    // Ours first, so the socket never lacks a reader of its bytes.
    hold(socket);
    for (const [event, listener] of found) socket.removeListener(event, listener);
    freeParser!(socket.parser, null, socket);
    // Consumed again by the parser Node gives it next.
    if (socket._handle) socket._handle._consumed = false;
    socket[PARKED] = res;
    res.on('finish', onFinish);
  }

  /** Takes parking's listeners off: the socket closes, or gets a parser again. */
  function release(socket: ParkedSocket): void {
    socket.removeListener('data', onData);
    socket.removeListener('end', onEnd);
    socket.removeListener('timeout', onTimeout);
    socket.removeListener('close', onClose);
    // Set, not deleted: a deleted property would slow every later access to the socket.
    socket[PARKED] = undefined;
    socket[SILENT] = false;
    parked.delete(socket);
  }

  /** The next request's first bytes: Node sets the connection up as new, and parses them. */
  function resume(socket: ParkedSocket, chunk: Buffer): void {
    release(socket);
    // The old set-up's close and error listeners give way to the new one's.
    for (const [event, name] of NODE_KEPT) {
      const listener = socket.listeners(event).find((fn) => fn.name === name);
      if (listener) socket.removeListener(event, listener as Listener);
    }
    // Keep-alive is over: a request is arriving (Node's `resetSocketTimeout`).
    const server = serverOf(socket)!;
    socket.setTimeout(server.timeout ?? 0);
    connectionListener!.call(server, socket);
    const onNodeData = socket.listeners('data').find((fn) => fn.name === 'bound socketOnData');
    if (!onNodeData) {
      socket.destroy();
      return;
    }
    (onNodeData as (chunk: Buffer) => void).call(socket, chunk);
  }

  function flush(): void {
    const polls = due;
    due = [];
    for (const res of polls) parkNow(res);
  }

  /** A new connection, parked from the start (Node's `connection` set-up, deferred). */
  function onConnection(this: Server, socket: ParkedSocket): void {
    socket[PARKED] = null;
    socket[SILENT] = true;
    hold(socket);
    socket.setTimeout(headersTimeoutMs);
  }
  let headersTimeoutMs = 0;

  return {
    adopt(server, timeoutMs) {
      if (!supported || !server.listeners('connection').includes(connectionListener!)) return;
      headersTimeoutMs = timeoutMs;
      // In Node's place, first, as Node's was.
      server.removeListener('connection', connectionListener!);
      server.prependListener('connection', onConnection);
    },
    park(res) {
      if (!supported) return;
      // Never inside Node's parser callbacks: the poll may have been
      // dispatched from the middle of a read. Node runs microtasks once the
      // read's callback is over (its parser done with the bytes), and before
      // the next connection's read: a burst of polls then reuses a few
      // parsers from Node's pool instead of holding one each at once.
      if (due.length === 0) queueMicrotask(flush);
      due.push(res);
    },
    get parked() {
      return parked.size;
    },
    closeIdle() {
      for (const socket of parked) if (socket[PARKED] === null) socket.destroy();
    },
  };
}
