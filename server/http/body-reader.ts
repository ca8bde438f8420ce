/**
 * The one body reader, with one set of limits, of every route that takes a
 * body (`POST /send`, `POST /typing`): a JSON object (the page) or a form
 * (the 2011 client, curl), at most `limits.maxBodyBytes` and
 * `limits.maxFields` fields, UTF-8 only. The routes call it in the same
 * order: `bodyType` (415 before anything else is spent), then their limit,
 * then `readBody` (the header checks, then body-parser).
 *
 * body-parser (the parsers behind `express.json` and `express.urlencoded`)
 * does the size limit, the charsets, `Content-Encoding` (gzip, deflate, br)
 * and a `Content-Length` that does not match; `toHttpError`
 * (error-handler.ts) maps its errors to the contract's codes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import bodyParser from 'body-parser';
import { TypeIs } from 'type-is';
import { limits } from '../../protocol/protocol.ts';
import { httpError } from '../core/errors.ts';
import { checkBodyHeaders, verifyUtf8 } from './body-checks.ts';

const BODY_LIMIT = limits.maxBodyBytes;

type Parser = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

const parsers: Record<string, Parser> = {
  'application/json': bodyParser.json({ limit: BODY_LIMIT, verify: verifyUtf8 }),
  'application/x-www-form-urlencoded': bodyParser.urlencoded({
    limit: BODY_LIMIT,
    extended: false,
    parameterLimit: limits.maxFields,
    verify: verifyUtf8,
  }),
};

/** Compiled once: the types a body may have. */
const bodyTypes = new TypeIs(Object.keys(parsers));

/** The body's type; 415 when there is no body or another type (type-is answers undefined). */
export function bodyType(req: IncomingMessage): string {
  const type = bodyTypes.request(req);
  if (!type) throw httpError('unsupported_media_type');
  return type;
}

/** The parsed body of `type` (`bodyType`), after the checks its headers allow (body-checks.ts). */
export function readBody(
  req: IncomingMessage,
  res: ServerResponse,
  type: string,
): Promise<unknown> {
  checkBodyHeaders(req, res, BODY_LIMIT);
  return new Promise((resolve, reject) => {
    parsers[type]!(req, res, (error) => {
      if (error) reject(error);
      else resolve((req as IncomingMessage & { body?: unknown }).body);
    });
  });
}
