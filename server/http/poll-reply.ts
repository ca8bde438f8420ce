/**
 * The HTTP side of a poll: how the hub's answers go on the wire, and what
 * the hub's poll events become (a request log line, a duration metric).
 * The hub hands over a body (server/hub/reply.ts); the status, the headers
 * and `Connection: close` are written here.
 */
import type { ServerResponse } from 'node:http';
import type { AddressOf } from '../core/client-address.ts';
import type { Body } from '../hub/body.ts';
import type { Hub } from '../hub/hub.ts';
import type { Replies } from '../hub/reply.ts';
import type { Telemetry } from '../metrics/telemetry.ts';
import { uncountedShare } from '../presence/address-cap.ts';
import { JSON_HEADERS } from './headers.ts';

type Headers = Readonly<Record<string, string | number>>;

/**
 * Writes a body as a poll's answer. The body is a string, not a Buffer:
 * Node then sends header and body in one `write`, where a Buffer body takes
 * a corked `writev` of two chunks (docs/design.md, "The hub").
 */
function send(res: ServerResponse, body: Body, last: boolean): boolean {
  if (res.writableEnded || res.destroyed) return false;
  // Built once per body, kept in its `wire` slot, and shared by every poll
  // it answers: the response has no header object of its own, so Node uses
  // this one as is.
  let headers = body.wire as Headers | undefined;
  if (headers === undefined) {
    headers = { ...JSON_HEADERS, 'Content-Length': Buffer.byteLength(body.json) };
    body.wire = headers;
  }
  if (last) res.setHeader('Connection', 'close');
  res.writeHead(200, headers);
  res.end(body.json);
  return true;
}

/** The hub's `Replies` for Node's responses; `park` from server/net/parking.ts. */
export function pollReplies(
  addressOf: AddressOf,
  park?: (res: ServerResponse) => void,
): Replies<ServerResponse> {
  return {
    send,
    addressOf: (res) => addressOf(res.req),
    shareOf: (res) => uncountedShare(res.req),
    ...(park && { park }),
  };
}

/** The hub's poll events, as request log lines and metrics (server/metrics/telemetry.ts). */
export function reportPolls(hub: Hub<ServerResponse>, telemetry: Telemetry): void {
  hub.onPollEnded(({ reply, room, outcome, ms }) =>
    telemetry.pollEnded({
      req: reply.req,
      room,
      outcome,
      status: outcome === 'gone' ? 0 : 200,
      ms,
    }),
  );
  hub.onDelivered((count) => telemetry.delivered(count));
}
