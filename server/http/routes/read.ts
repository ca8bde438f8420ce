/** The short read routes: `GET /history`, `GET /health` and `GET /ready` (`GET /time` is the lane's, lane.ts). */
import type { Request, Response } from 'express';
import type { HistoryAnswer } from '../../../protocol/protocol.ts';
import type { OutageState } from '../../metrics/outage.ts';
import type { ChatContext } from '../context.ts';
import type { SendLimit } from '../rate-limit.ts';
import { parseId, parseLimit, parseRoom } from '../validate.ts';
import { withTimeout } from '../with-timeout.ts';

/** Whether an `If-None-Match` names `etag` (weak comparison, RFC 9110 13.1.2), or is `*`. */
function matches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const bare = etag.slice(2);
  return header
    .split(',')
    .map((tag) => tag.trim())
    .some((tag) => tag === '*' || tag === etag || tag === bare || tag.slice(2) === bare);
}

/**
 * The latest page before `before`, oldest first: what a page shows when it
 * opens, and on scroll. Limited per address (`HISTORY_RATE`,
 * `HISTORY_BURST`): each page reads the store. Stored messages never
 * change, so a page is told by its URL and its ids: the ETag is built from
 * them, without hashing the body, and a request that names it
 * (`If-None-Match`) gets 304 with no body when the page is the same.
 */
export function historyRoute(chat: ChatContext, limit?: SendLimit) {
  return async function history(req: Request, res: Response): Promise<void> {
    await limit?.check(req, res);
    const room = parseRoom(req.query.room);
    const before = parseId(req.query.before);
    const size = parseLimit(req.query.limit, 50);
    const messages = await withTimeout(
      chat.store.before(room, before, size),
      chat.config.storeTimeoutMs,
      'Reading history',
    );
    const answer: HistoryAnswer = { messages };
    // A short page reaches the room's oldest kept message: if that is not
    // id 1, say whether the ones before it expired (a failed write's id is
    // a hole too). A full page needs no look: the next one will be short.
    const oldest = messages[0]?.id ?? before ?? 1;
    if (messages.length < size && oldest > 1) {
      const pruned = await withTimeout(
        chat.store.pruned(room),
        chat.config.storeTimeoutMs,
        'Reading history',
      );
      if (pruned > 0) answer.expired = true;
    }
    // The query is in the URL the ETag belongs to; the page is told by its ids.
    const first = messages[0]?.id ?? 0;
    const last = messages[messages.length - 1]?.id ?? 0;
    const etag = `W/"${first}-${last}-${messages.length}${answer.expired ? '-e' : ''}"`;
    // `no-cache`: a browser may keep the page but asks again each time, with the ETag.
    res.set('Cache-Control', 'no-cache').set('ETag', etag);
    if (matches(req.headers['if-none-match'], etag)) {
      res.status(304).end();
      return;
    }
    res.json(answer);
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
export function healthRoute(
  chat: ChatContext,
  store?: Pick<OutageState, 'up'>,
  bus?: Pick<OutageState, 'up'>,
) {
  const unavailable = (res: Response, status: 'draining' | 'unavailable') => {
    res.status(503).set('Retry-After', '5').json({ status });
  };
  return async function health(_req: Request, res: Response): Promise<void> {
    res.set('Cache-Control', 'no-store');
    if (chat.lifecycle.draining) return unavailable(res, 'draining');
    try {
      // The store wrapper tells `store` of the ping before this goes on
      // (server/metrics/write-health.ts): it stays down while the writes fail.
      await withTimeout(chat.store.ping(), chat.config.storeTimeoutMs, 'Pinging the store');
      if (chat.lifecycle.draining) return unavailable(res, 'draining');
      if (store && !store.up) return unavailable(res, 'unavailable');
      res.json({ status: bus?.up === false ? 'degraded' : 'ok' });
    } catch {
      unavailable(res, chat.lifecycle.draining ? 'draining' : 'unavailable');
    }
  };
}
