/** The short read routes: `GET /history`, `GET /health` and `GET /ready` (`GET /time` is the lane's, lane.ts). */
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

/**
 * Whether this process can serve, for load balancers and health checks.
 * `GET /ready` and `GET /health` answer alike (`/health` is the older name,
 * kept for the checks that use it):
 * - `200 {"status":"ok"}`;
 * - `200 {"status":"degraded"}` while the bus is down (Redis gone or
 *   silent): the process still serves everything, delivering through the
 *   store, so a load balancer keeps it (every server shares the one Redis:
 *   taking them out would take the chat down);
 * - `503 {"status":"draining"}` from the moment a graceful shutdown begins
 *   (SIGTERM; `SHUTDOWN_DRAIN_MS` keeps serving that long first), so a
 *   balancer sends nothing new;
 * - `503 {"status":"unavailable"}` when the store does not answer, or when
 *   the sends' latest writes failed (a full disk, a write lock held
 *   elsewhere: the store then reads well and stores nothing). Writes are
 *   judged from the sends' own outcomes (server/metrics/write-health.ts): a
 *   probe writes nothing.
 * Each 503 carries `Retry-After`. Nothing more: the public does not need the
 * pid, the backends or the driver's error text. Those go to the log (each
 * outage, once per change) and to the metrics (`chat_store_up`,
 * `chat_bus_up`, `chat_info`).
 */
export function healthRoute(chat: ChatContext, store?: OutageState, bus?: OutageState) {
  const unavailable = (res: Response, status: 'draining' | 'unavailable') => {
    res.status(503).set('Retry-After', '5').json({ status });
  };
  return async function health(_req: Request, res: Response): Promise<void> {
    res.set('Cache-Control', 'no-store');
    if (chat.lifecycle.draining) return unavailable(res, 'draining');
    try {
      await withTimeout(chat.store.ping(), chat.config.storeTimeoutMs, 'Pinging the store');
      store?.ok(); // Stays down while the writes fail.
      if (chat.lifecycle.draining) return unavailable(res, 'draining');
      if (store && !store.up) return unavailable(res, 'unavailable');
      res.json({ status: bus?.up === false ? 'degraded' : 'ok' });
    } catch (error) {
      store?.failed(error);
      unavailable(res, chat.lifecycle.draining ? 'draining' : 'unavailable');
    }
  };
}
