/**
 * A JSON error written straight to a socket, for the moments Node's HTTP
 * layer has no response object to give: a connection refused as it opens,
 * a request Node could not parse (`clientError`), a `CONNECT`. The body is
 * the contract's `{"error":{"code","message"}}`, with the JSON answers'
 * headers (server/http/headers.ts), and the connection closes after it.
 */

import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { HttpError } from '../core/errors.ts';
import { errorJson } from '../http/answer.ts';
import { JSON_HEADERS } from '../http/headers.ts';

/** Writes `error` as a whole HTTP/1.1 answer, then closes; false when the socket could not take it. */
export function writeRawError(socket: Duplex, error: HttpError): boolean {
  if (!socket.writable || socket.destroyed) {
    socket.destroy();
    return false;
  }
  const json = errorJson(error);
  const lines = [`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}`];
  for (const [name, value] of Object.entries(JSON_HEADERS)) lines.push(`${name}: ${value}`);
  if (error.retryAfter !== undefined) lines.push(`Retry-After: ${error.retryAfter}`);
  lines.push('Connection: close', `Content-Length: ${Buffer.byteLength(json)}`);
  socket.end(`${lines.join('\r\n')}\r\n\r\n${json}`);
  // Closed once written: a client that never reads cannot hold the descriptor.
  (socket as Duplex & { destroySoon?: () => void }).destroySoon?.();
  return true;
}
