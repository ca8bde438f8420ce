/**
 * Writing answers without Express: the JSON error answer for the requests
 * the lane refuses. The poll answers' bodies are the hub's
 * (server/hub/body.ts), with the same JSON headers.
 */
import type { ServerResponse } from 'node:http';
import type { HttpError } from '../core/errors.ts';
import { JSON_HEADERS } from '../hub/body.ts';

export { JSON_HEADERS };

/** The contract's error answer, `{"error":{"code","message"}}`, with `Retry-After` when given. */
export function writeError(res: ServerResponse, error: HttpError): void {
  if (res.writableEnded || res.destroyed) return;
  const json = JSON.stringify({ error: { code: error.code, message: error.message } });
  const headers: Record<string, string | number> = {
    ...JSON_HEADERS,
    'Content-Length': Buffer.byteLength(json),
  };
  if (error.retryAfter !== undefined) headers['Retry-After'] = String(error.retryAfter);
  res.writeHead(error.status, headers);
  res.end(json);
}
