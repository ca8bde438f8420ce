/**
 * Where errors become HTTP answers: `{"error":{"code","message"}}` with the
 * status of the code's entry in `errors.ts`. Errors from body-parser and the
 * stores are mapped to their codes here too (`toHttpError`), for the Express
 * routes and for `POST /send`, answered outside Express (`send.ts`).
 *
 * What is logged, and how (server/core/log.ts):
 * - a bug (500): once, in the request's log line, with its stack;
 * - the store failing (503): once per outage, by the store's outage state,
 *   which the store wrapper tells (server/metrics/write-health.ts); the
 *   requests it fails are ordinary lines of the request log;
 * - a client at fault (4xx), or gone before its answer: the request's line
 *   only. A client that hangs up mid-upload is not our error.
 */
import type { IncomingMessage } from 'node:http';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { type ErrorCode, HttpError, httpError } from '../core/errors.ts';
import { noteErrorCode } from '../metrics/request-log.ts';
import { StoreUnavailableError } from '../store/store.ts';
import { writeError } from './answer.ts';

/** body-parser's error `type`s, by the code we answer with. */
const bodyParserErrors: Record<string, ErrorCode> = {
  'entity.too.large': 'body_too_large',
  'parameters.too.many': 'too_many_fields',
  'entity.parse.failed': 'invalid_json',
  'charset.unsupported': 'unsupported_media_type',
  'encoding.unsupported': 'unsupported_encoding',
  // The Content-Length did not match the body that came.
  'request.size.invalid': 'invalid_body',
};

export const notFound: RequestHandler = () => {
  throw httpError('not_found');
};

export function errorHandler(): ErrorRequestHandler {
  // Express knows an error handler by its four parameters: keep `_next`.
  return (error: unknown, req, res, _next) => {
    if (clientGone(error, req)) {
      // Nobody to answer: the request log says "aborted", with status 0.
      res.destroy();
      return;
    }
    const httpErr = toHttpError(error);
    // For the request's line, which counts the refusal too (request-log.ts).
    noteErrorCode(res, httpErr.code, httpErr.status === 500 ? error : undefined);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // The one error writer, the lane's too (answer.ts).
    writeError(res, httpErr);
  };
}

/** The client hung up (mid-upload, most often): an error of the request, not of ours. */
export function clientGone(error: unknown, req: IncomingMessage): boolean {
  const { type, code } = (error ?? {}) as { type?: unknown; code?: unknown };
  return (
    type === 'request.aborted' ||
    code === 'ECONNRESET' ||
    code === 'ECONNABORTED' ||
    // (Not `req.destroyed`: a request whose body was read is destroyed too.)
    req.socket.destroyed
  );
}

/** Any error, as the contract's: ours as they are, body-parser's and the stores' by their kind, the rest a 500. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof StoreUnavailableError) {
    return httpError('store_unavailable', undefined, { retryAfter: 2, cause: error });
  }
  const { type, status, code } = (error ?? {}) as {
    type?: unknown;
    status?: unknown;
    code?: unknown;
  };
  if (typeof type === 'string' && type in bodyParserErrors) {
    return httpError(bodyParserErrors[type]!, undefined, { cause: error });
  }
  // A body that does not decompress: zlib's codes (Z_DATA_ERROR, Z_BUF_ERROR…)
  // and brotli's (ERR__ERROR_FORMAT_…, ERR_PADDING_…), reaching us through
  // body-parser as a 400 without a type.
  if (typeof code === 'string' && /^(Z_|ERR_)/.test(code) && status === 400) {
    return httpError('invalid_encoding', undefined, { cause: error });
  }
  // Any other client error body-parser (http-errors) raises: not a bug.
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return httpError('invalid_body', undefined, { cause: error });
  }
  return httpError('internal_error', undefined, { cause: error });
}
