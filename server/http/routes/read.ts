/** The short read routes: `GET /history`, `GET /health` (`GET /time` is the lane's, lane.ts). */
import type { Request, Response } from 'express';
import type { HistoryAnswer } from '../../../protocol/protocol.ts';
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
    const answer: HistoryAnswer = { messages };
    // A short page reaches the room's oldest kept message: if that is not
    // id 1, say whether the ones before it expired (a failed write's id is
    // a hole too). A full page needs no look: the next one will be short.
    const oldest = messages[0]?.id ?? before ?? 1;
    if (messages.length < limit && oldest > 1) {
      const pruned = await withTimeout(
        chat.store.pruned(room),
        chat.config.storeTimeoutMs,
        'Reading history',
      );
      if (pruned > 0) answer.expired = true;
    }
    store?.ok();
    res.set('Cache-Control', 'no-store').json(answer);
  };
}

/**
 * Whether this process can serve, for load balancers and health checks:
 * `200 {"status":"ok"}`, or `503 {"status":"unavailable"}` with `Retry-After`
 * when the store does not answer, or when the sends' latest writes failed
 * (a full disk, a write lock held elsewhere: the store then reads well and
 * stores nothing). Writes are judged from the sends' own outcomes
 * (server/metrics/write-health.ts): a probe writes nothing. With the store
 * up and the bus down (Redis gone or silent), `200 {"status":"degraded"}`:
 * the process still serves everything, delivering through the store, so a
 * load balancer keeps it (every server shares the one Redis: taking them out
 * would take the chat down). Nothing more: the public does not need the pid,
 * the backends or the driver's error text. Those go to the log (each outage,
 * once per change) and to the metrics (`chat_store_up`, `chat_bus_up`,
 * `chat_info`).
 */
export function healthRoute(chat: ChatContext, store?: OutageState, bus?: OutageState) {
  return async function health(_req: Request, res: Response): Promise<void> {
    res.set('Cache-Control', 'no-store');
    try {
      await withTimeout(chat.store.ping(), chat.config.storeTimeoutMs, 'Pinging the store');
      store?.ok(); // Stays down while the writes fail.
      if (store && !store.up) {
        res.status(503).set('Retry-After', '5').json({ status: 'unavailable' });
        return;
      }
      res.json({ status: bus?.up === false ? 'degraded' : 'ok' });
    } catch (error) {
      store?.failed(error);
      res.status(503).set('Retry-After', '5').json({ status: 'unavailable' });
    }
  };
}
