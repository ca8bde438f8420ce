/**
 * The one place where errors become HTTP answers: `{"error":{"code","message"}}`
 * with the status of the code's entry in `errors.ts`. Errors from body-parser
 * and the stores are mapped to their codes here too.
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { type ErrorCode, HttpError, httpError } from '../errors.ts';
import type { Log } from '../log.ts';
import { StoreUnavailableError } from '../store/store.ts';

/** body-parser's error `type`s, by the code we answer with. */
const bodyParserErrors: Record<string, ErrorCode> = {
  'entity.too.large': 'body_too_large',
  'parameters.too.many': 'body_too_large',
  'entity.parse.failed': 'invalid_json',
  'charset.unsupported': 'unsupported_media_type',
  'encoding.unsupported': 'unsupported_media_type',
};

export const notFound: RequestHandler = () => {
  throw httpError('not_found');
};

export function errorHandler(log: Log): ErrorRequestHandler {
  // Express knows an error handler by its four parameters: keep `_next`.
  return (error: unknown, req, res, _next) => {
    const httpErr = toHttpError(error);
    if (httpErr.status >= 500) {
      log('error', `${req.method} ${req.originalUrl} -> ${httpErr.status} ${httpErr.code}`, error);
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (httpErr.retryAfter !== undefined) res.set('Retry-After', String(httpErr.retryAfter));
    res
      .status(httpErr.status)
      .set('Cache-Control', 'no-store')
      .json({ error: { code: httpErr.code, message: httpErr.message } });
  };
}

function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof StoreUnavailableError) {
    return httpError('store_unavailable', undefined, { retryAfter: 2, cause: error });
  }
  const type = (error as { type?: unknown } | null)?.type;
  if (typeof type === 'string' && type in bodyParserErrors) {
    return httpError(bodyParserErrors[type]!, undefined, { cause: error });
  }
  return httpError('internal_error', undefined, { cause: error });
}
