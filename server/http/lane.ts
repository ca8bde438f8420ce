/**
 * The lane: the one request listener that `server.ts` gives Node. It sends
 * the hot routes (hot-routes.ts) straight to their handlers, skipping
 * Express's router, and everything else to the Express app (`app.ts`),
 * which holds the very same handlers, so an answer is the same whichever
 * way it came (docs/design.md, "The request pipeline").
 *
 * Why skip the router: a waiting poll is most of the traffic, and Express's
 * per-request work (prototype swaps, the router's closures and path
 * matching) costs more than the delivery itself; a sender waits for its
 * answer before its next message, so a send's cost bounds how fast messages
 * come; and `GET /time` is the articles' measure of pure server overhead.
 * engine.io takes over the request listener the same way.
 *
 * The lane matches (hot-path.ts) the spellings Express's routing accepts (any case, one
 * trailing slash), so no request for these routes reaches the app's router
 * by another door. Other methods go to the app, which answers 405 with
 * `Allow` (api-routes.ts).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { type AppOps, createApp } from './app.ts';
import type { ChatContext } from './context.ts';
import { hotRequestOf } from './hot-path.ts';
import { createHotRoutes } from './hot-routes.ts';

export function createRequestListener(chat: ChatContext, ops: AppOps = {}): RequestListener {
  const hot = createHotRoutes(chat, ops);
  const app = createApp(chat, ops, hot);
  return (req: IncomingMessage, res: ServerResponse) => {
    const route = hotRequestOf(req);
    if (route === undefined) return app(req, res);
    hot[route.path](req, res, route.rawQuery);
  };
}
