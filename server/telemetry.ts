/**
 * The `Telemetry` seam: what the chat tells its operators, beside the log.
 *
 * The long-poll path (`server/http/recv.ts`) and the message log call these
 * hooks; an implementation turns them into metrics (Prometheus) and request
 * log lines. `noTelemetry` is the default, so tests and tools that do not
 * care pass nothing. Hooks are synchronous and must not throw: they run on
 * the delivery path.
 */
import type { IncomingMessage } from 'node:http';

/** How a `GET /recv` ended. */
export type PollOutcome =
  /** Answered with messages (at once, or while it waited). */
  | 'message'
  /** Held for the whole poll timeout, answered empty. */
  | 'timeout'
  /** The client went away before its answer. */
  | 'gone'
  /** Answered empty because the server is shutting down. */
  | 'shutdown'
  /** Answered empty because the room's online count changed. */
  | 'presence'
  /** Answered at once because the cursor is ahead of the room (`reset`). */
  | 'reset'
  /** Refused with an error answer (4xx/5xx): bad input, overloaded, a limit. */
  | 'error';

export interface PollEnded {
  /** The request, for its id (`X-Request-Id`), method, url and address. */
  req: IncomingMessage;
  room: string;
  outcome: PollOutcome;
  /** The status code answered (0 when the client went away first). */
  status: number;
  /** Error code, when `outcome` is `error`. */
  code?: string;
  /** Milliseconds from arrival to the end. */
  ms: number;
}

/** A request answered outside Express (`GET /time`, `POST /send`), for its request log line. */
export interface RequestEnded {
  req: IncomingMessage;
  path: string;
  /** The status code answered (0 when the client went away first). */
  status: number;
  ms: number;
  /** Error code, when it was refused. */
  code?: string | undefined;
  /** The bug behind a 500, logged with its stack. */
  bug?: unknown;
}

export interface Telemetry {
  /** Every `GET /recv`, once, when it ends: a request log line and a duration metric. */
  pollEnded(ended: PollEnded): void;
  /** Every other request answered without Express: its request log line, and a refusal's count. */
  requestEnded(ended: RequestEnded): void;
  /** `count` deliveries (a message written to one waiting poll counts once). */
  delivered(count: number): void;
}

export const noTelemetry: Telemetry = {
  pollEnded() {},
  requestEnded() {},
  delivered() {},
};
