/**
 * `POST /send`'s body, refused as early as its headers allow, before
 * body-parser reads it (body-reader.ts):
 * - a `Content-Length` over the limit gets 413 at once, and the connection
 *   closes (the body is never read). body-parser refuses such a length too,
 *   but answers only once it has drained the whole body, so the client got
 *   no answer until `BODY_TIMEOUT_MS` cut the upload with a bare 408;
 * - a charset other than UTF-8 gets 415: body-parser decodes JSON in any
 *   `utf-*` charset (`utf-16le`, and `utf-7`, which turns `+ADw-` into `<`)
 *   and forms in `iso-8859-1`, and the README promises UTF-8 only.
 * And after it is read, the bytes must be valid UTF-8 (`verifyUtf8`, given
 * to body-parser): invalid bytes would be stored as U+FFFD, so they get
 * `invalid_unicode`, as a lone surrogate does.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { httpError } from '../core/errors.ts';

/** Throws the refusal the headers already call for; `res` closes its connection after a 413. */
export function checkBodyHeaders(req: IncomingMessage, res: ServerResponse, limit: number): void {
  const charset = charsetOf(req.headers['content-type']);
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw httpError('unsupported_media_type', 'Send the body in UTF-8 (charset=utf-8, or none).');
  }
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  const length = Number(req.headers['content-length']);
  // A compressed body is limited once inflated (body-parser): its length says nothing yet.
  if (encoding === 'identity' && Number.isFinite(length) && length > limit) {
    res.setHeader('Connection', 'close');
    throw httpError('body_too_large');
  }
}

/** body-parser's `verify`: the body as read (inflated) must be UTF-8. */
export function verifyUtf8(_req: IncomingMessage, _res: ServerResponse, body: Buffer): void {
  if (!isUtf8(body)) throw httpError('invalid_unicode', 'The request body is not valid UTF-8.');
}

/** The `charset` parameter of a Content-Type, lower case, unquoted; undefined when none. */
function charsetOf(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const match = /;\s*charset\s*=\s*("?)([^";\s]*)\1/i.exec(contentType);
  return match ? match[2]!.toLowerCase() : undefined;
}
