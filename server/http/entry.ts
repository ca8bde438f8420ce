/**
 * The one HTTP entry: the request listener that `server.ts` gives Node.
 *
 * Three routes are answered here, without Express; the rest goes to the
 * Express app:
 * - `GET /recv`, the long-poll lane (`recv.ts`). Why: a waiting poll is most
 *   of the traffic, and Express's per-request work (prototype swaps, the
 *   router's closures and path matching, helmet's headers) cost more than
 *   the delivery itself. Measured with the bench (A/B on the same quiet
 *   machine): server CPU per poll 240 → 137 µs, JS heap per waiting poll
 *   5.3 → 2.8 KB, fan-out p99 1.0 → 0.5 s at N=10,000, 11,000 → 26,800
 *   delivered messages/s.
 * - `POST /send` (`send.ts`): a sender waits for its answer before its next
 *   message, so a send's cost bounds how fast messages come; through Express
 *   it cost 2.5–3× the CPU (`send.ts` has the figures).
 * - `GET /time`, the articles' measure of pure server overhead: it reads
 *   nothing and validates nothing, and through Express it cost 1.14× bare
 *   Express's CPU (bench T1).
 * Express's routing also takes other spellings of these paths (`/SEND`,
 * `/send/`); it hands those to the same handlers (`app.ts`).
 *
 * What these skip: every Express middleware. Headers, by route:
 * - `GET /recv`, `GET /time`, `POST /send` (JSON read by the page's
 *   script): Content-Type, `Cache-Control: no-store`,
 *   `X-Content-Type-Options: nosniff` (no MIME sniffing) and
 *   `Cross-Origin-Resource-Policy: same-origin` (no other site's page can
 *   read them): of helmet's headers, the ones that mean anything on a JSON
 *   answer (`answer.ts`, `JSON_HEADERS`). CSP, frame and referrer policies
 *   act on documents, and the page carries them. Also `X-Request-Id` on
 *   `/time` and `/send`, and the `RateLimit` headers on `/send`.
 * - Everything else (the page, its assets, `/history`, `/health`, other
 *   errors): helmet's full set, through the Express app.
 * The request log: these report each answer to `Telemetry` (one line per
 * request, as pino-http writes for the rest). Middleware added to the app for
 * all routes must be added here too if it concerns these three.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { requestId } from '../metrics/request-log.ts';
import { JSON_HEADERS } from './answer.ts';
import { type AppOps, createApp } from './app.ts';
import type { ChatContext } from './context.ts';
import { createRecvHandler } from './recv.ts';
import { createSendHandler } from './send.ts';

export function createRequestListener(chat: ChatContext, ops: AppOps = {}): RequestListener {
  const recv = createRecvHandler(chat);
  const send = createSendHandler(chat, {
    limit: ops.sendLimit,
    metrics: ops.ops?.metrics,
    store: ops.ops?.store,
  });
  const recvRoute = (req: IncomingMessage, res: ServerResponse) => recv(req, res, queryOf(req.url));
  const app = createApp(chat, { recv: recvRoute, send }, ops);
  const { telemetry } = chat;
  return (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '';
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    if (req.method === 'GET' && path === '/recv') {
      return recv(req, res, mark < 0 ? '' : url.slice(mark + 1));
    }
    if (req.method === 'POST' && path === '/send') return send(req, res);
    if (req.method === 'GET' && path === '/time') {
      const started = performance.now();
      const json = `{"time":"${new Date().toISOString()}"}`;
      res.writeHead(200, {
        ...JSON_HEADERS,
        'Content-Length': json.length,
        'X-Request-Id': requestId(req),
      });
      res.end(json);
      telemetry.requestEnded({ req, path: '/time', status: 200, ms: performance.now() - started });
      return;
    }
    app(req, res);
  };
}

function queryOf(url: string | undefined): string {
  const value = url ?? '';
  const mark = value.indexOf('?');
  return mark < 0 ? '' : value.slice(mark + 1);
}
