/**
 * The `Telemetry` of a running chat (server/telemetry.ts): every `GET /recv`
 * ends in one request log line and one observation of the poll-duration
 * histogram; deliveries count in a counter.
 *
 * `/recv` is answered by a fast lane outside Express (and a waiting poll
 * never goes back to Express), so pino-http never sees it: this writes its
 * line, with the request log's fields (server/metrics/request-log.ts) plus
 * the room and how the poll ended:
 *
 *   {"level":"info",…,"reqId":"…","method":"GET","path":"/recv","status":200,
 *    "ms":25003,"room":"main","outcome":"timeout","msg":"GET /recv 200 timeout"}
 */
import type { Logger } from 'pino';
import type { PollEnded, RequestEnded, Telemetry } from '../telemetry.ts';
import type { ChatMetrics } from './metrics.ts';
import { requestId } from './request-log.ts';

export function createTelemetry(metrics: ChatMetrics, logger: Logger): Telemetry {
  return {
    pollEnded(ended: PollEnded): void {
      const { req, room, outcome, status, code, ms } = ended;
      metrics.pollSeconds.observe({ outcome }, ms / 1000);
      if (code !== undefined) metrics.refused.inc({ code });
      const level = status >= 500 && status !== 503 ? 'error' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      logger[level](
        {
          reqId: requestId(req),
          method: req.method,
          path: '/recv',
          status,
          ms: Math.round(ms),
          room,
          outcome,
          ...(code === undefined ? {} : { code }),
        },
        `${req.method} /recv ${status === 0 ? 'aborted' : status} ${outcome}`,
      );
    },
    requestEnded({ req, path, status, ms }: RequestEnded): void {
      if (!logger.isLevelEnabled('info')) return;
      logger.info(
        { reqId: requestId(req), method: req.method, path, status, ms: Math.round(ms) },
        `${req.method} ${path} ${status}`,
      );
    },
    delivered(count: number): void {
      metrics.delivered.inc(count);
    },
  };
}
