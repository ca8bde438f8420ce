/** The short read routes: `GET /history`, `GET /time`, `GET /health`. */
import type { Request, Response } from 'express';
import type { OutageState } from '../../metrics/outage.ts';
import type { ChatContext } from '../context.ts';
import { parseId, parseLimit, parseRoom } from '../validate.ts';
import { withTimeout } from '../with-timeout.ts';

/** The latest page before `before`, oldest first: what a page shows when it opens, and on scroll. */
export function historyRoute(chat: ChatContext, store?: OutageState) {
  return async function history(req: Request, res: Response): Promise<void> {
    const room = parseRoom(req.query.room);
    const before = parseId(req.query.before);
    const limit = parseLimit(req.query.limit, 50);
    const messages = await withTimeout(
      chat.store.before(room, before, limit),
      chat.config.storeTimeoutMs,
      'Reading history',
    );
    store?.ok();
    res.set('Cache-Control', 'no-store').json({ messages });
  };
}

/** The trivial route of the original article's first benchmark: pure server overhead. */
export function timeRoute(_req: Request, res: Response): void {
  res.set('Cache-Control', 'no-store').json({ time: new Date().toISOString() });
}

/**
 * Whether this process can serve, for load balancers and health checks:
 * `200 {"status":"ok"}`, or `503 {"status":"unavailable"}` with `Retry-After`
 * when the store does not answer, or when the sends' latest writes failed
 * (a full disk, a write lock held elsewhere: the store then reads well and
 * stores nothing). Writes are judged from the sends' own outcomes
 * (server/metrics/write-health.ts): a probe writes nothing. Nothing more: the public does not need the
 * pid, the backends or the driver's error text. Those go to the log (the
 * store's outage, once per change) and to the metrics (`chat_store_up`,
 * `chat_info`, `chat_polls_waiting`).
 */
export function healthRoute(chat: ChatContext, store?: OutageState) {
  return async function health(_req: Request, res: Response): Promise<void> {
    res.set('Cache-Control', 'no-store');
    try {
      await withTimeout(chat.store.ping(), chat.config.storeTimeoutMs, 'Pinging the store');
      store?.ok(); // Stays down while the writes fail.
      if (store && !store.up) {
        res.status(503).set('Retry-After', '5').json({ status: 'unavailable' });
        return;
      }
      res.json({ status: 'ok' });
    } catch (error) {
      store?.failed(error);
      res.status(503).set('Retry-After', '5').json({ status: 'unavailable' });
    }
  };
}
