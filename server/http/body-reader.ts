/**
 * The one body reader, for every route that takes a body (`POST /send`,
 * `POST /typing`), with one set of limits: the contract's
 * `limits.maxBodyBytes` and `limits.maxFields`, UTF-8 only (body-checks.ts).
 *
 * Two steps, so a route can put its rate limit between them: `typeOf`
 * refuses a body of another type (415) from its headers alone, and `read`
 * refuses what the headers already call for (a length over the limit, a
 * charset other than UTF-8), then reads and parses the body with
 * body-parser, the parsers behind `express.json` and `express.urlencoded`:
 * the size limit, the charsets, `Content-Encoding` (gzip, deflate, br) and a
 * `Content-Length` that does not match are its work; `toHttpError`
 * (error-handler.ts) maps its errors to the contract's codes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import bodyParser from 'body-parser';
import { TypeIs } from 'type-is';
import { limits } from '../../protocol/protocol.ts';
import { httpError } from '../core/errors.ts';
import { checkBodyHeaders, verifyUtf8 } from './body-checks.ts';

type Parser = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

export interface BodyReader {
  /** The body's media type; throws 415 for no body or another type. */
  typeOf(req: IncomingMessage): string;
  /** The parsed body (a JSON value, or a form's fields), or the contract's error. */
  read(req: IncomingMessage, res: ServerResponse, type: string): Promise<unknown>;
}

export function createBodyReader(): BodyReader {
  const limit = limits.maxBodyBytes;
  // The two bodies a route may take: a JSON object (the page) or a form (the 2011 client, curl).
  const parsers: Record<string, Parser> = {
    'application/json': bodyParser.json({ limit, verify: verifyUtf8 }),
    'application/x-www-form-urlencoded': bodyParser.urlencoded({
      limit,
      extended: false,
      parameterLimit: limits.maxFields,
      verify: verifyUtf8,
    }),
  };
  // Compiled once.
  const types = new TypeIs(Object.keys(parsers));
  return {
    typeOf(req) {
      // No body, or another type: type-is answers undefined.
      const type = types.request(req);
      if (!type) throw httpError('unsupported_media_type');
      return type;
    },
    read(req, res, type) {
      checkBodyHeaders(req, res, limit);
      const parse = parsers[type]!;
      return new Promise((resolve, reject) => {
        parse(req, res, (error) => {
          if (error) reject(error);
          // body-parser leaves the body on `req.body`.
          else resolve((req as IncomingMessage & { body?: unknown }).body);
        });
      });
    },
  };
}
