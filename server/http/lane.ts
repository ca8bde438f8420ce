/**
 * The lane: the one request listener that `server.ts` gives Node, and the
 * routes it answers without Express (docs/design.md, "The lane"). Everything
 * else goes to the Express app (`app.ts`).
 *
 * Why a lane at all: a waiting poll is most of the traffic, and Express's
 * per-request work (prototype swaps, the router's closures and path
 * matching, helmet's headers) cost more than the delivery itself; a sender
 * waits for its answer before its next message, so a send's cost bounds how
 * fast messages come; and `GET /time` is the articles' measure of pure
 * server overhead. The bench figures are in docs/design.md. engine.io takes
 * over the request listener the same way.
 *
 * The contract, in one place:
 * - `LANE_ROUTES` names every method and spelling the lane answers: the
 *   spellings Express's routing accepts (any case, one trailing slash), so
 *   no request for these routes reaches Express by another door. Other
 *   methods go to the app, which answers 405 with `Allow` (api-routes.ts).
 * - One header writer (`writeJson`, answer.ts; the hub's prebuilt poll
 *   bodies carry the same `JSON_HEADERS`), one error writer (`writeError`),
 *   one log line per request (server/metrics/telemetry.ts), refusals counted
 *   in `chat_requests_refused_total` as the app counts its own.
 * - `LANE_DIFFERENCES`: where its answers differ from the app's on purpose.
 *   The parity test (test/http/lane-parity.test.ts) holds both to it.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { requestId } from '../metrics/request-log.ts';
import type { Telemetry } from '../metrics/telemetry.ts';
import { writeJson } from './answer.ts';
import { type AppOps, createApp } from './app.ts';
import type { ChatContext } from './context.ts';
import { createRecvHandler } from './recv.ts';
import { createSendHandler } from './send.ts';

/** Every route the lane answers, and its methods (HEAD: the GET answer without its body). */
export const LANE_ROUTES = [
  { path: '/recv', methods: ['GET', 'HEAD'] },
  { path: '/send', methods: ['POST'] },
  { path: '/time', methods: ['GET', 'HEAD'] },
] as const;

export type LanePath = (typeof LANE_ROUTES)[number]['path'];

/**
 * Where the lane's answers differ from the Express app's, on purpose; the
 * parity test reads this table, so a difference not written here fails it.
 */
export const LANE_DIFFERENCES = {
  /**
   * helmet's headers that act on documents (CSP, framing, referrer,
   * cross-origin opener and agent policies, HSTS…): the page carries them,
   * and a JSON answer read by XHR has no use for them. The lane keeps the two
   * that mean something on JSON (`JSON_HEADERS`).
   */
  documentHeaders: [
    'content-security-policy',
    'cross-origin-opener-policy',
    'origin-agent-cluster',
    'referrer-policy',
    'strict-transport-security',
    'x-dns-prefetch-control',
    'x-download-options',
    'x-frame-options',
    'x-permitted-cross-domain-policies',
    'x-xss-protection',
  ],
  /**
   * `/recv` answers share prebuilt headers (server/hub/body.ts: one header
   * object per group of polls), so they carry no per-request id, and its log
   * line has no `ip`: a poll's address is read only when it is to wait near
   * the per-address limit (server/hub/address-count.ts).
   */
  recv: { missingHeaders: ['x-request-id'], missingLogFields: ['ip'] },
} as const;

/** The lane route of a path, in any spelling Express's routing accepts (any case, one trailing slash). */
export function lanePath(path: string): LanePath | undefined {
  if (path === '/recv' || path === '/send' || path === '/time') return path;
  let spelled = path.toLowerCase();
  if (spelled.length > 1 && spelled.endsWith('/')) spelled = spelled.slice(0, -1);
  return spelled === '/recv' || spelled === '/send' || spelled === '/time' ? spelled : undefined;
}

/** Whether the lane answers `method` on `path` (`LANE_ROUTES`; the others get the app's 405). */
function answers(path: LanePath, method: string | undefined): boolean {
  if (path === '/send') return method === 'POST';
  return method === 'GET' || method === 'HEAD';
}

/** `GET /time`: the time, nothing read, nothing validated. */
function createTimeHandler(telemetry: Telemetry) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const started = performance.now();
    writeJson(res, 200, `{"time":"${new Date().toISOString()}"}`, {
      'X-Request-Id': requestId(req),
    });
    telemetry.requestEnded({ req, path: '/time', status: 200, ms: performance.now() - started });
  };
}

export function createRequestListener(chat: ChatContext, ops: AppOps = {}): RequestListener {
  const recv = createRecvHandler(chat);
  const send = createSendHandler(chat, {
    limit: ops.sendLimit,
    metrics: ops.ops?.metrics,
    store: ops.ops?.store,
  });
  const time = createTimeHandler(chat.telemetry);
  const app = createApp(chat, ops);
  const takeAnswers = chat.store.takeAnswers?.bind(chat.store);
  return (req: IncomingMessage, res: ServerResponse) => {
    // Sends stored meanwhile are acknowledged now, in this turn (sqlite-store.ts).
    takeAnswers?.();
    const url = req.url ?? '';
    const mark = url.indexOf('?');
    const path = lanePath(mark < 0 ? url : url.slice(0, mark));
    if (path === undefined || !answers(path, req.method)) return app(req, res);
    if (path === '/recv') return recv(req, res, mark < 0 ? '' : url.slice(mark + 1));
    if (path === '/send') return send(req, res);
    time(req, res);
  };
}
