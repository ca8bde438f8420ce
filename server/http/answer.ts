/**
 * Writing the lane's answers (lane.ts): one writer of a JSON answer's
 * headers and body, and the contract's error answer on top of it. The poll
 * answers' bodies are the hub's, prebuilt with the same JSON headers
 * (server/hub/body.ts).
 */
import type { ServerResponse } from 'node:http';
import type { HttpError } from '../core/errors.ts';
import { JSON_HEADERS } from '../hub/body.ts';

export { JSON_HEADERS };

/** A JSON answer: `JSON_HEADERS`, its length, then `headers`. */
export function writeJson(
  res: ServerResponse,
  status: number,
  json: string,
  headers?: Readonly<Record<string, string | number>>,
): void {
  res.writeHead(status, {
    ...JSON_HEADERS,
    'Content-Length': Buffer.byteLength(json),
    ...headers,
  });
  res.end(json);
}

/** The contract's error answer, `{"error":{"code","message"}}`, with `Retry-After` when given. */
export function writeError(res: ServerResponse, error: HttpError): void {
  if (res.writableEnded || res.destroyed) return;
  const json = JSON.stringify({ error: { code: error.code, message: error.message } });
  const retry =
    error.retryAfter === undefined ? undefined : { 'Retry-After': String(error.retryAfter) };
  writeJson(res, error.status, json, retry);
}
