/** The short read routes: `GET /history`, `GET /time`, `GET /health`. */
import type { Request, Response } from 'express';
import type { ChatContext } from '../context.ts';
import { parseId, parseLimit, parseRoom } from '../validate.ts';
import { withTimeout } from '../with-timeout.ts';

/** The latest page before `before`, oldest first: what a page shows when it opens, and on scroll. */
export function historyRoute(chat: ChatContext) {
  return async function history(req: Request, res: Response): Promise<void> {
    const room = parseRoom(req.query.room);
    const before = parseId(req.query.before);
    const limit = parseLimit(req.query.limit, 50);
    const messages = await withTimeout(
      chat.store.before(room, before, limit),
      chat.config.storeTimeoutMs,
      'Reading history',
    );
    res.set('Cache-Control', 'no-store').json({ messages });
  };
}

/** The trivial route of the original article's first benchmark: pure server overhead. */
export function timeRoute(_req: Request, res: Response): void {
  res.set('Cache-Control', 'no-store').json({ time: new Date().toISOString() });
}

export function healthRoute(chat: ChatContext) {
  return async function health(_req: Request, res: Response): Promise<void> {
    const about = {
      store: chat.store.kind,
      bus: chat.bus.kind,
      waiting: chat.waiters.size,
      pid: process.pid,
      uptime: Math.round(process.uptime()),
    };
    res.set('Cache-Control', 'no-store');
    try {
      await withTimeout(chat.store.ping(), chat.config.storeTimeoutMs, 'Pinging the store');
      res.json({ status: 'ok', ...about });
    } catch (error) {
      res
        .status(503)
        .set('Retry-After', '5')
        .json({
          status: 'unavailable',
          ...about,
          error: { code: 'store_unavailable', message: (error as Error).message },
        });
    }
  };
}
