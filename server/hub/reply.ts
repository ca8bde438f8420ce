/**
 * What the hub writes a poll's answer to: the few members of a response it
 * uses, so the hub imports nothing of HTTP (docs/design.md, "The hub"). Node's
 * `ServerResponse` has them all and is passed as is: no wrapper per poll.
 */
import type { Body } from './body.ts';

export interface Reply {
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
  writeHead(status: number, headers: Readonly<Record<string, string | number>>): unknown;
  end(text: string): unknown;
  setHeader(name: string, value: string): unknown;
  /** `close` before the answer: the client went away. */
  on(event: 'close', listener: () => void): unknown;
  removeListener(event: 'close', listener: () => void): unknown;
}

/**
 * Writes a prebuilt answer: no per-client header object (the response has
 * none of its own, so Node uses the body's as is). The body is a string,
 * not a Buffer: Node then sends header and body in one `write`, where a
 * Buffer body takes a corked `writev` of two chunks (docs/design.md, "The
 * hub"). False when the client is gone or was answered already.
 */
export function writeBody(reply: Reply, body: Body): boolean {
  if (reply.writableEnded || reply.destroyed) return false;
  reply.writeHead(200, body.headers);
  reply.end(body.json);
  return true;
}
