/**
 * The request log: one JSON line per finished request, written by one
 * function (`writeRequestLine`) for every route, hot or not:
 *
 *   {"level":"info","time":"…","pid":7,"hostname":"…","reqId":"3f2c…",
 *    "method":"POST","path":"/send","status":200,"ms":4,"ip":"203.0.113.9",
 *    "msg":"POST /send 200"}
 *
 * - `reqId` is the caller's `X-Request-Id` when it sends a sane one (a proxy
 *   or a client tracing a request), otherwise a new UUID; it is echoed in the
 *   answer's `X-Request-Id`.
 * - `status` is 0 when the client went away before its answer (`aborted`).
 * - `code` is the error code of an error answer; `err` (with its stack) is
 *   there only for a 500, the one kind of answer that means a bug.
 * - The path only, never the query or the body: no message text is logged.
 *
 * Levels: `error` for 5xx but 503 (503 means a backend is down or the process
 * is full, which is logged once per change elsewhere); `info` for the rest.
 *
 * The hot routes call the telemetry when they end (server/metrics/telemetry.ts);
 * the Express app's routes end through `createRequestLog`, which calls it too.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler } from 'express';
import type { Logger } from 'pino';

/** What an incoming `X-Request-Id` may be: no spaces, quotes or control characters. */
const REQUEST_ID = /^[A-Za-z0-9._:/+=@-]{1,128}$/;

/**
 * The request's id: its own `X-Request-Id` when sane, else a new one. Kept
 * on the request (`req.id`), so every caller gets the same id.
 */
export function requestId(req: IncomingMessage): string {
  const known = req as IncomingMessage & { id?: unknown };
  if (typeof known.id === 'string') return known.id;
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  known.id = id;
  return id;
}

/** A request that is not a poll, for its request log line. */
export interface RequestEnded {
  req: IncomingMessage;
  path: string;
  /** The status code answered (0 when the client went away first). */
  status: number;
  ms: number;
  /** Error code, when it was refused. */
  code?: string | undefined;
  /** The bug behind a 500, logged with its stack. */
  bug?: unknown;
}

export type Level = 'info' | 'error';

/** `error` for a 5xx but 503 (503: a backend is down or the process full, logged once per change elsewhere). */
export const levelOf = (status: number): Level =>
  status >= 500 && status !== 503 ? 'error' : 'info';

/** The one writer of a request's line: the fields above, then `fields`, then `suffix` on the message. */
export function writeRequestLine(
  logger: Logger,
  req: IncomingMessage,
  path: string,
  status: number,
  ms: number,
  fields: object,
  suffix = '',
): void {
  logger[levelOf(status)](
    { reqId: requestId(req), method: req.method, path, status, ms: Math.round(ms), ...fields },
    `${req.method} ${path} ${status === 0 ? 'aborted' : status}${suffix}`,
  );
}

const noted = Symbol('errorCode');
type Noted = ServerResponse & { [noted]?: { code: string; bug: unknown } };

/** The error handler notes the code it answered with (and a 500's bug), for the request's line. */
export function noteErrorCode(res: ServerResponse, code: string, bug?: unknown): void {
  (res as Noted)[noted] = { code, bug };
}

/**
 * The Express app's side of the request log: the id echoed on every answer,
 * and the line written through the telemetry once the answer is out (or the
 * client gone), as the hot routes write theirs.
 */
export function createRequestLog(telemetry: {
  requestEnded(ended: RequestEnded): void;
}): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    res.setHeader('X-Request-Id', requestId(req));
    let ended = false;
    const onEnd = () => {
      if (ended) return;
      ended = true;
      const error = (res as Noted)[noted];
      telemetry.requestEnded({
        req,
        path: (req as Request).path,
        // 0 when no whole answer went out: the client left first.
        status: res.headersSent && res.writableFinished ? res.statusCode : 0,
        ms: performance.now() - started,
        code: error?.code,
        bug: error?.bug,
      });
    };
    res.once('finish', onEnd);
    res.once('close', onEnd);
    next();
  };
}
