/**
 * The `Telemetry` seam: what the chat tells its operators, beside the log,
 * and the implementation a running chat uses.
 *
 * The long-poll path (the hub and `server/http/recv.ts`) calls these hooks;
 * `createTelemetry` turns them into metrics (Prometheus) and request log
 * lines. Hooks are synchronous and must not throw: they run on the
 * delivery path.
 *
 * Every `GET /recv` ends in one request log line and one observation of the
 * poll-duration histogram; deliveries count in a counter.
 *
 * Every request's line is written by the request log's one writer
 * (server/metrics/request-log.ts, `writeRequestLine`): the hot routes
 * (server/http/hot-routes.ts) call these hooks themselves, and the Express
 * app's routes through its request log middleware. A poll's line has the
 * room and how the poll ended too:
 *
 *   {"level":"info",…,"reqId":"…","method":"GET","path":"/recv","status":200,
 *    "ms":25003,"room":"main","outcome":"timeout","msg":"GET /recv 200 timeout"}
 *
 * The other lines carry the client's address (`ip`), a refusal's `code`,
 * and for a bug (500), at level `error`, its stack (`err`).
 */
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { AddressOf } from '../core/client-address.ts';
import type { PollOutcome } from '../hub/report.ts';
import type { ChatMetrics } from './metrics.ts';
import { levelOf, type RequestEnded, writeRequestLine } from './request-log.ts';

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

export interface Telemetry {
  /** Every `GET /recv`, once, when it ends: a request log line and a duration metric. */
  pollEnded(ended: PollEnded): void;
  /** Every other request: its request log line, and a refusal's count. */
  requestEnded(ended: RequestEnded): void;
  /** `count` deliveries (a message written to one waiting poll counts once). */
  delivered(count: number): void;
}

export function createTelemetry(
  metrics: ChatMetrics,
  logger: Logger,
  addressOf?: AddressOf,
): Telemetry {
  // One child per outcome, made once: `observe({outcome}, …)` would hash the
  // labels on every poll, and polls are most of the traffic.
  const durations = new Map<PollOutcome, { observe(value: number): void }>();
  const durationOf = (outcome: PollOutcome) => {
    let child = durations.get(outcome);
    if (!child) {
      child = metrics.pollSeconds.labels({ outcome });
      durations.set(outcome, child);
    }
    return child;
  };
  return {
    pollEnded(ended: PollEnded): void {
      const { req, room, outcome, status, code, ms } = ended;
      durationOf(outcome).observe(ms / 1000);
      if (code !== undefined) metrics.refused.inc({ code });
      if (!logger.isLevelEnabled(levelOf(status))) return;
      const fields = { room, outcome, ...(code === undefined ? {} : { code }) };
      writeRequestLine(logger, req, '/recv', status, ms, fields, ` ${outcome}`);
    },
    requestEnded({ req, path, status, ms, code, bug }: RequestEnded): void {
      if (code !== undefined) metrics.refused.inc({ code });
      if (!logger.isLevelEnabled(levelOf(status))) return;
      const fields = {
        ip: addressOf?.(req),
        ...(code === undefined ? {} : { code }),
        ...(bug === undefined ? {} : { err: bug }),
      };
      writeRequestLine(logger, req, path, status, ms, fields);
    },
    delivered(count: number): void {
      metrics.delivered.inc(count);
    },
  };
}
