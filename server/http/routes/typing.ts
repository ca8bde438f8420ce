/**
 * `POST /typing`: someone types in a room (protocol.ts, `TypingFields`).
 * Checked like a send (from this site, per-address limit, parsed and
 * validated at the edge), then handed to the hub, which stores nothing: it
 * wakes the room's waiting polls at most every `TYPING_WAKE_MS` and tells
 * the other processes on the bus (server/hub/typing.ts).
 *
 * Through Express, not a hot route (server/http/hot-routes.ts): a page sends one at most every
 * `limits.typingIntervalMs` while its person types, so its cost is not
 * delivery's. The limit is its own budget (`TYPING_RATE`, `TYPING_BURST`
 * per person, `TYPING_ADDRESS_RATE` per address): typing never uses up a
 * person's sends.
 */
import type { Request, Response } from 'express';
import { clientHost } from '../../core/client-address.ts';
import { httpError } from '../../core/errors.ts';
import { bodyType, readLimitedBody } from '../body-reader.ts';
import type { ChatContext } from '../context.ts';
import { createCrossSiteCheck } from '../cross-site.ts';
import type { SendLimit } from '../rate-limit.ts';
import { parseTyping } from '../validate.ts';

export function typingRoute(chat: ChatContext, limit: SendLimit | undefined) {
  const checkSameSite = createCrossSiteCheck(
    chat.config.allowedOrigins,
    clientHost(chat.config.trustProxy),
  );

  return async function typing(req: Request, res: Response): Promise<void> {
    // The checks of a send, in its order (send.ts, body-reader.ts).
    checkSameSite(req);
    const type = bodyType(req);
    const body = await readLimitedBody(req, res, type, limit);
    if (chat.hub.closed) throw httpError('shutting_down', undefined, { retryAfter: 1 });
    const { room, client, nickname, stopped } = parseTyping(body);
    chat.hub.typed(room, client, nickname, stopped, req.ip);
    res.set('Cache-Control', 'no-store').json({ status: 'ok' });
  };
}
