/**
 * HTTP/1.1 pipelining, bounded: what a connection may ask before it reads
 * its answers.
 *
 * Node parses every request a client writes and dispatches each at once,
 * whatever is still unanswered ahead of it on the connection, and keeps
 * their answers until the ones ahead are written. Behind a long-poll that
 * held everything for up to 25 s, and nothing counted it: 50 connections
 * of one address, each with a poll and 2,000 pipelined requests, grew the
 * server by gigabytes.
 *
 * The rule (docs/design.md, "Limits"):
 * - Behind a long-poll (`GET`/`HEAD /recv`, not yet answered) nothing is
 *   pipelined. The first request that comes behind one is refused with 400
 *   `pipelining_refused` and `Connection: close`; the poll is answered at
 *   once with the same refusal, so both answers go out now (a send behind a
 *   poll is told at once that it was not stored, and the client sends it
 *   again on another connection). The connection then closes: what the
 *   client wrote after is never dispatched nor read.
 * - Elsewhere a connection holds at most `maxPipelined` unanswered requests;
 *   the next is refused the same way, after the ones ahead are answered.
 * Browsers never pipeline, so the page never meets this.
 *
 * What is refused costs nothing more. Node parses a whole read (up to
 * 64 KB, some 1,600 small requests) before it can be stopped, and builds a
 * request and a response object for each, dispatched or not: 50 such
 * connections took seconds of CPU and over 100 MB before they closed. So on
 * refusal the connection's parser stops calling back (`stopParsing`: the
 * rest of the read is scanned in C++, and nothing is built), and the
 * connection stops reading until it closes.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { httpError } from '../core/errors.ts';
import { writeError } from '../http/answer.ts';
import { isPoll } from '../http/hot-path.ts';
import { writeRawError } from './raw-answer.ts';

export interface PipeliningOptions {
  maxPipelined: number;
  /** A request started on the socket (connection-limit.ts: it is not idle). */
  onBusy?: (socket: Socket) => void;
  /** The socket answered everything it had. */
  onIdle?: (socket: Socket) => void;
  /** Sockets whose requests are never served (refused as they opened). */
  isRefused?: (socket: Socket) => boolean;
  onRefused?: () => void;
}

interface Connection {
  /** Requests dispatched and not yet answered (or closed). */
  pending: number;
  /** The unanswered long-poll of the connection, if one is. */
  poll: ServerResponse | undefined;
  /** A request was refused: the connection closes, nothing more is served. */
  closing: boolean;
}

const connections = new WeakMap<Socket, Connection>();

export function guardPipelining(
  listener: RequestListener,
  options: PipeliningOptions,
): RequestListener {
  const { maxPipelined, onBusy, onIdle, isRefused, onRefused } = options;
  return (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    if (isRefused?.(socket)) return;
    let connection = connections.get(socket);
    if (!connection) {
      connection = { pending: 0, poll: undefined, closing: false };
      connections.set(socket, connection);
    }
    if (connection.closing) return;
    const behindPoll = connection.poll !== undefined && !connection.poll.writableEnded;
    if (behindPoll || connection.pending >= maxPipelined) {
      refuse(connection, res);
      onRefused?.();
      return;
    }
    connection.pending += 1;
    if (connection.pending === 1) onBusy?.(socket);
    // One listener function for every request, not a closure per request:
    // a waiting poll is most of the traffic, and each closure is kept while
    // it waits. A poll's end is heard on its request, everything else's on
    // its response (see `onDone`).
    if (isPoll(req)) {
      connection.poll = res;
      req.on('close', onDone);
    } else {
      res.on('close', onDone);
    }
    listener(req, res);
  };

  /**
   * A request is done: its response closed (answered, or the client went).
   * A poll's request closes only after its response: nothing reads a poll's
   * body, so Node reads it (and the request ends, then closes) once the
   * response has finished, or on the socket's close. A listener on the
   * request, not the response: a `close` or `finish` listener on every
   * response made V8's young-generation collections keep much more of what
   * the server allocates, with longer pauses (bench T6, seen in `--trace-gc`,
   * not understood), which cost sustained delivery (the bench reports).
   * Sends read their body, so their
   * request ends first: theirs is heard on the response.
   */
  function onDone(this: IncomingMessage | ServerResponse): void {
    // A response has left its socket by now (`res.socket` is null): its request holds it.
    const socket =
      (this as Partial<ServerResponse>).req?.socket ?? (this as IncomingMessage).socket;
    const connection = connections.get(socket);
    if (!connection) return;
    connection.pending -= 1;
    if (
      connection.poll !== undefined &&
      (connection.poll === this || connection.poll.req === this)
    ) {
      connection.poll = undefined;
    }
    if (connection.pending === 0 && !connection.closing) onIdle?.(socket);
  }
}

function refuse(connection: Connection, res: ServerResponse): void {
  connection.closing = true;
  stopParsing(res.req.socket);
  const refusal = httpError('pipelining_refused');
  res.setHeader('Connection', 'close');
  writeError(res, refusal);
  // Answered now, so the refusal queued behind it goes out now too.
  if (connection.poll) writeError(connection.poll, refusal);
}

/**
 * Bytes came behind a poll whose connection is parked (parking.ts: it has
 * no parser to dispatch them): the same refusal as `refuse`, the poll's
 * answer first, then the request's, and the connection closes.
 */
export function refuseParked(poll: ServerResponse, socket: Socket): void {
  const connection = connections.get(socket);
  if (connection) connection.closing = true;
  const refusal = httpError('pipelining_refused');
  writeError(poll, refusal);
  writeRawError(socket, refusal);
}

type ParserCallback = (...args: unknown[]) => unknown;
interface NodeParser {
  [slot: number]: ParserCallback;
  onIncoming: ParserCallback | null;
  constructor: Partial<
    Record<'kOnHeaders' | 'kOnHeadersComplete' | 'kOnBody' | 'kOnMessageComplete', number>
  >;
}

/**
 * Node has no API to stop its HTTP parser within a read: its callbacks, by
 * their slots on the parser (`HTTPParser.kOnHeadersComplete`…, the same in
 * Node 20 to 26), and the server's `parser.onIncoming`, are replaced with
 * no-ops, and the socket is paused as Node pauses it for back-pressure
 * (`_paused`); they are put back when the connection closes. Without a parser (already freed) there is nothing to stop.
 */
function stopParsing(socket: Socket): void {
  const internals = socket as Socket & { parser?: NodeParser | null; _paused?: boolean };
  const parser = internals.parser;
  if (parser) {
    const slots = parser.constructor;
    // Node pools its parsers: the next connection gets this one back, callbacks restored.
    const saved: Array<[number, ParserCallback]> = [];
    for (const name of [
      'kOnHeaders',
      'kOnHeadersComplete',
      'kOnBody',
      'kOnMessageComplete',
    ] as const) {
      const slot = slots[name];
      if (typeof slot !== 'number') continue;
      saved.push([slot, parser[slot]!]);
      parser[slot] = () => 0;
    }
    // Node 26 reaches the server's `onIncoming` without the slot above, so
    // it goes too: without it every request of the read is still dispatched.
    const onIncoming = parser.onIncoming;
    parser.onIncoming = () => 0;
    socket.once('close', () => {
      for (const [slot, callback] of saved) parser[slot] = callback;
      if (parser.onIncoming !== null) parser.onIncoming = onIncoming;
    });
  }
  internals._paused = true;
  socket.pause();
}
