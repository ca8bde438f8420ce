/**
 * The request log: one JSON line per finished request (pino-http), with the
 * same fields as the long-poll's lines (server/metrics/telemetry.ts):
 *
 *   {"level":"info","time":"…","pid":7,"hostname":"…","reqId":"3f2c…",
 *    "method":"POST","path":"/send","status":200,"ms":4,"ip":"203.0.113.9",
 *    "msg":"POST /send 200"}
 *
 * - `reqId` is the caller's `X-Request-Id` when it sends a sane one (a proxy
 *   or a client tracing a request), otherwise a new UUID; it is echoed in the
 *   answer's `X-Request-Id`, and every line logged for the request carries it.
 * - `status` is 0 when the client went away before its answer (`aborted`).
 * - `code` is the error code of an error answer; `err` (with its stack) is
 *   there only for a 500, the one kind of answer that means a bug.
 * - The path only, never the query or the body: no message text is logged.
 *
 * Levels: `error` for 5xx but 503 (503 means a backend is down or the process
 * is full, which is logged once per change elsewhere); `info` for the rest.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';

/** What an incoming `X-Request-Id` may be: no spaces, quotes or control characters. */
const REQUEST_ID = /^[A-Za-z0-9._:/+=@-]{1,128}$/;

/**
 * The request's id: its own `X-Request-Id` when sane, else a new one. Kept
 * on the request (`req.id`, where pino-http keeps it too), so every caller
 * gets the same id.
 */
export function requestId(req: IncomingMessage): string {
  const known = req as IncomingMessage & { id?: unknown };
  if (typeof known.id === 'string') return known.id;
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  known.id = id;
  return id;
}

const errorCodeKey = Symbol('errorCode');
type Noted = ServerResponse & { [errorCodeKey]?: string; err?: Error };

/** The error handler notes the code it answered with, for the request's log line. */
export function noteErrorCode(res: ServerResponse, code: string, bug?: unknown): void {
  (res as Noted)[errorCodeKey] = code;
  // pino-http logs `res.err` with the line, stack included.
  if (bug !== undefined) (res as Noted).err = bug as Error;
}

/** The status a line reports: 0 when no answer went out (the client left first). */
function statusOf(res: ServerResponse): number {
  return res.headersSent ? res.statusCode : 0;
}

function fields(req: IncomingMessage, res: ServerResponse, ms: number) {
  const express = req as Partial<Request>;
  const code = (res as Noted)[errorCodeKey];
  // `reqId` is bound to the request's logger already (quietReqLogger).
  return {
    method: req.method,
    path: express.path ?? (req.url ?? '').split('?')[0],
    status: statusOf(res),
    ms,
    ip: express.ip,
    ...(code === undefined ? {} : { code }),
  };
}

function message(req: IncomingMessage, res: ServerResponse): string {
  const path = (req as Partial<Request>).path ?? (req.url ?? '').split('?')[0];
  const status = statusOf(res);
  return `${req.method} ${path} ${status === 0 || !res.writableEnded ? 'aborted' : status}`;
}

export function createRequestLog(logger: Logger): RequestHandler {
  if (!logger.isLevelEnabled('info')) return errorsOnlyLog(logger);
  const middleware = pinoHttp({
    logger,
    quietReqLogger: true,
    quietResLogger: true,
    genReqId(req, res) {
      const id = requestId(req);
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customLogLevel(_req, res, error) {
      const status = statusOf(res);
      if (error || (status >= 500 && status !== 503)) return 'error';
      return 'info';
    },
    customSuccessObject: (req, res, value) =>
      fields(req, res, (value as { responseTime: number }).responseTime),
    customErrorObject(req, res, _error, value) {
      const line = fields(req, res, (value as { responseTime: number }).responseTime);
      // Only a 500 has a bug to show; a 503's cause is logged once per outage.
      const bug = (res as Noted).err;
      return bug === undefined ? line : { ...line, err: bug };
    },
    customSuccessMessage: (req, res) => message(req, res),
    customErrorMessage: (req, res) => message(req, res),
  });
  return middleware as unknown as RequestHandler;
}

/**
 * The request log when the level is above `info` (`LOG_LEVEL=warn` or
 * `error`): no line for an ordinary answer, so no pino-http, whose child
 * logger and serialisers cost about a tenth of a `POST /send`'s CPU even when
 * they write nothing (profiled under `ab`). The id is still given and
 * echoed, and a bug (a 500) is still logged once, with its stack.
 */
function errorsOnlyLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    res.setHeader('X-Request-Id', requestId(req));
    res.once('finish', () => {
      const bug = (res as Noted).err;
      if (bug === undefined) return;
      logger.error({ reqId: requestId(req), ...fields(req, res, 0), err: bug }, message(req, res));
    });
    next();
  };
}
