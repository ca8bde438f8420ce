/**
 * Writing JSON answers: one writer of a JSON answer (with the policy's
 * `JSON_HEADERS`, headers.ts), and the one writer of the contract's error body
 * (`errorJson`), which every error answer goes through: the lane's, the
 * Express app's (error-handler.ts), and those written straight to a socket
 * (server/net/raw-answer.ts).
 */
import type { ServerResponse } from 'node:http';
import type { HttpError } from '../core/errors.ts';
import { JSON_HEADERS } from './headers.ts';

/** The contract's error body, `{"error":{"code","message"}}`: the one place it is written. */
export function errorJson(error: HttpError): string {
  return JSON.stringify({ error: { code: error.code, message: error.message } });
}

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

/** The contract's error answer, with `Retry-After` when given. */
export function writeError(res: ServerResponse, error: HttpError): void {
  if (res.writableEnded || res.destroyed) return;
  const retry =
    error.retryAfter === undefined ? undefined : { 'Retry-After': String(error.retryAfter) };
  writeJson(res, error.status, errorJson(error), retry);
}
