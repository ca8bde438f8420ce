/**
 * `createApp(chat)`: the Express app, given the seams it calls. It does not
 * listen: `server.ts` does, and tests drive it on port 0. It registers the
 * hot routes' handlers (hot-routes.ts) first, ahead of its own middleware,
 * so a hot route it is given answers exactly as when the lane (`lane.ts`)
 * hands it over without the router; it answers their other methods with 405.
 *
 * Headers by the one policy (headers.ts): the API's JSON answers get
 * `JSON_HEADERS`, the page and everything else helmet's `DOCUMENT_HEADERS`,
 * each computed once.
 */
import { resolve } from 'node:path';
import express, { type Express, type RequestHandler } from 'express';
import { clientAddress } from '../core/client-address.ts';
import { httpError } from '../core/errors.ts';
import { createRequestLog } from '../metrics/request-log.ts';
import { metricsRoute } from '../metrics/serve.ts';
import { API_ROUTES } from './api-routes.ts';
import type { ChatContext } from './context.ts';
import { errorHandler, notFound } from './error-handler.ts';
import { DOCUMENT_HEADERS, JSON_HEADERS, setHeaders } from './headers.ts';
import { LANE_ROUTES } from './hot-path.ts';
import { createHotRoutes, type HotRoutes, type HotRoutesOptions } from './hot-routes.ts';
import type { SendLimit } from './rate-limit.ts';
import { healthRoute, historyRoute } from './routes/read.ts';
import { typingRoute } from './routes/typing.ts';

/** What operators get from the app (server/metrics/ops.ts); tests may leave it out. */
export interface AppOps extends HotRoutesOptions {
  /** `POST /typing` per address (rate-limit.ts, `createTypingLimit`). */
  typingLimit?: SendLimit | undefined;
  /** `GET /history` per address (rate-limit.ts, `createHistoryLimit`). */
  historyLimit?: SendLimit | undefined;
}

export function createApp(
  chat: ChatContext,
  appOps: AppOps = {},
  hot: HotRoutes = createHotRoutes(chat, appOps),
): Express {
  const { ops, typingLimit, historyLimit } = appOps;
  const app = express();
  app.set('trust proxy', chat.config.trustProxy);
  // No hash of every answer: `/history` sets an ETag of its own, from the
  // page's ids, without hashing the body (routes/read.ts).
  app.set('etag', false);
  app.disable('x-powered-by');
  // The hot routes before any middleware: they write their own headers and
  // log line, as they do when the lane hands them over.
  for (const { path, methods } of LANE_ROUTES) {
    const handler = hot[path];
    const route: RequestHandler = (req, res) => {
      const mark = req.url.indexOf('?');
      handler(req, res, mark < 0 ? '' : req.url.slice(mark + 1));
    };
    // (Express answers HEAD with the GET route.)
    if ((methods as readonly string[]).includes('GET')) app.get(path, route);
    else app.post(path, route);
  }
  // `req.ip` by the chat's bounded rule (client-address.ts), not proxy-addr's,
  // which parses every entry of X-Forwarded-For and keeps what is not an IP.
  const addressOf = clientAddress(chat.config.trustProxy, chat.config.forwardedForMaxBytes);
  app.use((req, _res, next) => {
    Object.defineProperty(req, 'ip', { value: addressOf(req), configurable: true });
    next();
  });

  // One log line per finished request, by the writer the hot routes use
  // (server/metrics/request-log.ts), which counts the refusals too.
  app.use(createRequestLog(chat.telemetry));
  // For operators, not in API_ROUTES: the shipped proxies do not pass it on.
  if (ops?.metricsOnChatPort) app.get('/metrics', metricsRoute(ops.metricsOnChatPort));

  app.use(
    API_ROUTES.map(({ path }) => path),
    (_req, res, next) => {
      setHeaders(res, JSON_HEADERS);
      next();
    },
  );

  app.get('/history', historyRoute(chat, historyLimit));
  const health = healthRoute(chat, ops?.store, ops?.bus);
  app.get('/health', health);
  app.get('/ready', health);
  app.post('/typing', typingRoute(chat, typingLimit));
  for (const { path, allow } of API_ROUTES) app.all(path, methodNotAllowed(allow));

  app.use((_req, res, next) => {
    setHeaders(res, DOCUMENT_HEADERS);
    next();
  });

  if (chat.config.serveStatic) app.use(staticFiles(chat.config.staticDir));

  app.use(notFound);
  app.use(errorHandler());
  return app;
}

function methodNotAllowed(allow: string): RequestHandler {
  return (_req, res) => {
    res.set('Allow', allow);
    throw httpError('method_not_allowed');
  };
}

/**
 * The built client. Vite puts a content hash in every name under `assets/`,
 * so those may be cached for a year; `index.html` names them, so it is
 * revalidated on every load (`no-cache`).
 */
function staticFiles(dir: string): RequestHandler {
  return express.static(resolve(dir), {
    index: 'index.html',
    etag: true,
    setHeaders(res, path) {
      const immutable = /[\\/]assets[\\/]/.test(path);
      res.setHeader(
        'Cache-Control',
        immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
    },
  });
}
