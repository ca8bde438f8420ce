/**
 * The hot routes, `GET /recv`, `POST /send` and `GET /time`, and the one
 * handler of each. The same handler answers whichever way the request came:
 * straight from the request listener (lane.ts, which skips Express's router
 * for speed) or through the Express app, which registers these handlers
 * ahead of its own middleware (app.ts). Each writes its own headers (the
 * policy's `JSON_HEADERS`, headers.ts), its errors through the one error
 * writer (answer.ts) and its log line through the telemetry, so nothing of
 * the answer depends on the way in (docs/design.md, "The request pipeline").
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChatOps } from '../metrics/ops.ts';
import { requestId } from '../metrics/request-log.ts';
import type { Telemetry } from '../metrics/telemetry.ts';
import { writeJson } from './answer.ts';
import type { ChatContext } from './context.ts';
import type { LanePath } from './hot-path.ts';
import type { SendLimit } from './rate-limit.ts';
import { type CountedClient, createRecvHandler } from './recv.ts';
import { createSendHandler } from './send.ts';

/** A hot route's handler, given the raw query string after `?` ('' when none). */
export type HotHandler = (req: IncomingMessage, res: ServerResponse, rawQuery: string) => void;

export type HotRoutes = Readonly<Record<LanePath, HotHandler>>;

/** `GET /time`: the time, nothing read, nothing validated. */
function createTimeHandler(telemetry: Telemetry): HotHandler {
  return (req, res) => {
    const started = performance.now();
    writeJson(res, 200, `{"time":"${new Date().toISOString()}"}`, {
      'X-Request-Id': requestId(req),
    });
    telemetry.requestEnded({ req, path: '/time', status: 200, ms: performance.now() - started });
  };
}

/** What the hot routes are given besides the chat (the app's `AppOps` hold these too). */
export interface HotRoutesOptions {
  ops?: ChatOps | undefined;
  sendLimit?: SendLimit | undefined;
  /** Whether a poll's client id is counted online (the per-address cap, server.ts). */
  countedClient?: CountedClient | undefined;
}

export function createHotRoutes(chat: ChatContext, ops: HotRoutesOptions = {}): HotRoutes {
  const send = createSendHandler(chat, {
    limit: ops.sendLimit,
    metrics: ops.ops?.metrics,
  });
  return {
    '/recv': createRecvHandler(chat, ops.countedClient),
    '/send': (req, res) => send(req, res),
    '/time': createTimeHandler(chat.telemetry),
  };
}
