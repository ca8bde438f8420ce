/**
 * The catalogue of error codes the HTTP API answers with.
 *
 * Handlers `throw httpError('text_required')`; one error middleware at the end
 * of the app turns it into `{"error":{"code","message"}}` with the status
 * below. The README lists this table; tests assert the code, not the wording.
 * Messages that name a limit are built from the protocol's `limits`, so a
 * limit changes in one place.
 */
import { CLIENT_PATTERN, KEY_PATTERN, limits, ROOM_PATTERN } from '../../protocol/protocol.ts';

export const errorCodes = {
  invalid_json: { status: 400, message: 'The request body is not valid JSON.' },
  invalid_body: { status: 400, message: 'The request body must be an object of fields.' },
  too_many_fields: {
    status: 400,
    message: `The request body has more than ${limits.maxFields} fields.`,
  },
  text_required: { status: 400, message: 'Field "text" is required and must not be blank.' },
  text_too_long: {
    status: 400,
    message: `Field "text" is longer than ${limits.maxText} characters.`,
  },
  invalid_text: {
    status: 400,
    message:
      'Field "text" must be a string without direction overrides or embeddings (U+202A-U+202E), and with every isolate (U+2066-U+2068) closed by U+2069.',
  },
  invalid_nickname: {
    status: 400,
    message:
      'Field "nickname" must be a string without direction override or isolate characters (U+202A-U+202E, U+2066-U+2069).',
  },
  invalid_unicode: {
    status: 400,
    message:
      'Fields "text" and "nickname" must be well-formed Unicode: a lone surrogate (half of a UTF-16 pair) cannot be stored as sent.',
  },
  nickname_too_long: {
    status: 400,
    message: `Field "nickname" is longer than ${limits.maxNickname} characters.`,
  },
  invalid_room: { status: 400, message: `Field "room" must match ${ROOM_PATTERN.source}.` },
  invalid_key: { status: 400, message: `Field "key" must match ${KEY_PATTERN.source}.` },
  client_required: { status: 400, message: 'Field "client" is required.' },
  invalid_client: {
    status: 400,
    message: `Parameter "client" must match ${CLIENT_PATTERN.source}.`,
  },
  invalid_cursor: { status: 400, message: 'A message id must be a non-negative integer.' },
  invalid_encoding: {
    status: 400,
    message: 'The request body cannot be decoded with the Content-Encoding it names.',
  },
  bad_request: {
    status: 400,
    message: 'The request is not valid HTTP/1.1 (its request line, a header or its framing).',
  },
  pipelining_refused: {
    status: 400,
    message:
      'A request was pipelined behind a long-poll, or past the unanswered requests one connection may hold: send it on another connection (this one closes).',
  },
  invalid_limit: {
    status: 400,
    message: `Parameter "limit" must be an integer from 1 to ${limits.pageSize}.`,
  },
  cross_site: { status: 403, message: 'Cross-site requests are refused.' },
  not_found: { status: 404, message: 'No such route.' },
  method_not_allowed: { status: 405, message: 'This route does not accept that method.' },
  request_timeout: {
    status: 408,
    message: 'The request did not arrive whole in time.',
  },
  expectation_failed: { status: 417, message: 'Only "Expect: 100-continue" is understood.' },
  host_not_allowed: {
    status: 421,
    message: 'This server does not answer for the host named in the request.',
  },
  headers_too_large: { status: 431, message: 'The request headers are too large.' },
  body_too_large: {
    status: 413,
    message: `The request body is larger than ${limits.maxBodyBytes / 1024} KB.`,
  },
  unsupported_media_type: {
    status: 415,
    message: 'Send application/json or application/x-www-form-urlencoded.',
  },
  unsupported_encoding: {
    status: 415,
    message: 'Send the body as it is, or with Content-Encoding gzip, deflate or br.',
  },
  rate_limited: { status: 429, message: 'Too many messages; retry after the delay given.' },
  typing_rate_limited: {
    status: 429,
    message: 'Too many typing notices; retry after the delay given.',
  },
  storage_limited: {
    status: 429,
    message: 'This address has stored too much text this hour; retry after the delay given.',
  },
  history_rate_limited: {
    status: 429,
    message: 'Too many history requests; retry after the delay given.',
  },
  too_many_polls: {
    status: 429,
    message: 'This address holds too many waiting polls; retry after the delay given.',
  },
  too_many_connections: {
    status: 429,
    message: 'This address holds too many open connections; retry after the delay given.',
  },
  internal_error: { status: 500, message: 'Something went wrong on the server.' },
  store_unavailable: {
    status: 503,
    message:
      'The message store cannot be reached or did not answer in time. Retry shortly; with the same key a send is stored once.',
  },
  overloaded: {
    status: 503,
    message: 'The server holds too many waiting requests; retry shortly.',
  },
  connections_full: {
    status: 503,
    message: 'The server holds as many connections as it may; retry shortly.',
  },
  shutting_down: { status: 503, message: 'The server is shutting down; retry shortly.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof errorCodes;

export class HttpError extends Error {
  readonly status: number;
  /** Seconds, sent as `Retry-After` (429 and 503). */
  readonly retryAfter: number | undefined;

  constructor(
    readonly code: ErrorCode,
    message?: string,
    options: { retryAfter?: number; cause?: unknown } = {},
  ) {
    super(message ?? errorCodes[code].message, { cause: options.cause });
    this.name = 'HttpError';
    this.status = errorCodes[code].status;
    this.retryAfter = options.retryAfter;
  }
}

export function httpError(
  code: ErrorCode,
  message?: string,
  options?: { retryAfter?: number; cause?: unknown },
): HttpError {
  return new HttpError(code, message, options);
}
