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
 * `/recv` is answered by a fast lane outside Express (and a waiting poll
 * never goes back to Express), so pino-http never sees it: this writes its
 * line, with the request log's fields (server/metrics/request-log.ts) plus
 * the room and how the poll ended:
 *
 *   {"level":"info",…,"reqId":"…","method":"GET","path":"/recv","status":200,
 *    "ms":25003,"room":"main","outcome":"timeout","msg":"GET /recv 200 timeout"}
 *
 * It writes the lines of `GET /time` and `POST /send` too, also answered
 * outside Express (server/http/lane.ts), with the fields pino-http gives the rest,
 * the client's address (`ip`) included: a refusal's `code`, and for a bug
 * (500), at level `error`, its stack (`err`).
 */
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { AddressOf } from '../core/client-address.ts';
import type { PollOutcome } from '../hub/report.ts';
import type { ChatMetrics } from './metrics.ts';
import { requestId } from './request-log.ts';

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

type Level = 'info' | 'error';

/** `error` for a 5xx but 503 (503: a backend is down or the process full, logged once per change elsewhere). */
const levelOf = (status: number): Level => (status >= 500 && status !== 503 ? 'error' : 'info');

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
  /** A request's line: the fields of request-log.ts, then `fields`. */
  function write(
    level: Level,
    req: IncomingMessage,
    path: string,
    status: number,
    ms: number,
    fields: object,
    outcome = '',
  ): void {
    logger[level](
      { reqId: requestId(req), method: req.method, path, status, ms: Math.round(ms), ...fields },
      `${req.method} ${path} ${status === 0 ? 'aborted' : status}${outcome}`,
    );
  }

  return {
    pollEnded(ended: PollEnded): void {
      const { req, room, outcome, status, code, ms } = ended;
      durationOf(outcome).observe(ms / 1000);
      if (code !== undefined) metrics.refused.inc({ code });
      const level = levelOf(status);
      if (!logger.isLevelEnabled(level)) return;
      const fields = { room, outcome, ...(code === undefined ? {} : { code }) };
      write(level, req, '/recv', status, ms, fields, ` ${outcome}`);
    },
    requestEnded({ req, path, status, ms, code, bug }: RequestEnded): void {
      if (code !== undefined) metrics.refused.inc({ code });
      const level = levelOf(status);
      if (!logger.isLevelEnabled(level)) return;
      const fields = {
        ip: addressOf?.(req),
        ...(code === undefined ? {} : { code }),
        ...(bug === undefined ? {} : { err: bug }),
      };
      write(level, req, path, status, ms, fields);
    },
    delivered(count: number): void {
      metrics.delivered.inc(count);
    },
  };
}
