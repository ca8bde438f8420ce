/**
 * The one HTTP entry: the request listener that `server.ts` gives Node.
 *
 * Every request is first offered to the long-poll lane, which takes each
 * `GET /recv` (and nothing else) and answers it without Express; the rest
 * goes to the Express app. Why: a waiting poll is most of the traffic, and
 * Express's per-request work (prototype swaps, the router's closures and
 * path matching, helmet's headers) cost more than the delivery itself.
 * Measured with the bench (A/B on the same quiet machine): server CPU per
 * poll 240 → 137 µs, JS heap per waiting poll 5.3 → 2.8 KB, fan-out p99
 * 1.0 → 0.5 s at N=10,000, 11,000 → 26,800 delivered messages/s.
 *
 * What a `GET /recv` therefore skips: every Express middleware (helmet: its
 * answers carry the headers that matter on JSON themselves, `answer.ts`;
 * the request log: the lane reports each poll to `Telemetry` when it ends).
 * Middleware added to the app for all routes must be added here too if it
 * concerns `/recv`.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { type AppOps, createApp } from './app.ts';
import type { ChatContext } from './context.ts';
import { createRecvHandler } from './recv.ts';

export function createRequestListener(chat: ChatContext, ops: AppOps = {}): RequestListener {
  const recv = createRecvHandler(chat);
  const app = createApp(chat, recv.route, ops);
  return (req: IncomingMessage, res: ServerResponse) => {
    if (!recv.lane(req, res)) app(req, res);
  };
}
