/**
 * `POST /typing`: someone types in a room (protocol.ts, `TypingFields`).
 * Checked like a send (from this site, per-address limit, parsed and
 * validated at the edge), then handed to the hub, which stores nothing: it
 * wakes the room's waiting polls at most every `TYPING_WAKE_MS` and tells
 * the other processes on the bus (server/hub/typing.ts).
 *
 * Through Express, not the lane (server/http/lane.ts): a page sends one at most every
 * `limits.typingIntervalMs` while its person types, so its cost is not
 * delivery's. The limit is its own budget (`TYPING_RATE`, `TYPING_BURST`):
 * typing never uses up a person's sends.
 */
import express, { type Request, type Response } from 'express';
import { TypeIs } from 'type-is';
import { limits } from '../../../protocol/protocol.ts';
import { clientHost } from '../../core/client-address.ts';
import { httpError } from '../../core/errors.ts';
import { checkBodyHeaders, verifyUtf8 } from '../body-checks.ts';
import type { ChatContext } from '../context.ts';
import { createCrossSiteCheck } from '../cross-site.ts';
import type { SendLimit } from '../rate-limit.ts';
import { parseTyping } from '../validate.ts';

/** The contract's body limit, as for a send (`limits.maxBodyBytes`); three short fields fit well within it. */
const BODY_LIMIT = limits.maxBodyBytes;

export function typingRoute(chat: ChatContext, limit: SendLimit | undefined) {
  const checkSameSite = createCrossSiteCheck(
    chat.config.allowedOrigins,
    clientHost(chat.config.trustProxy),
  );
  const bodyTypes = new TypeIs(['application/json', 'application/x-www-form-urlencoded']);
  const json = express.json({ limit: BODY_LIMIT, verify: verifyUtf8 });
  const form = express.urlencoded({
    limit: BODY_LIMIT,
    extended: false,
    parameterLimit: limits.maxFields,
    verify: verifyUtf8,
  });
  const parse = (req: Request, res: Response, type: string) =>
    new Promise<void>((resolve, reject) => {
      const parser = type === 'application/json' ? json : form;
      parser(req, res, (error?: unknown) => (error ? reject(error) : resolve()));
    });

  return async function typing(req: Request, res: Response): Promise<void> {
    checkSameSite(req);
    const type = bodyTypes.request(req);
    if (!type) throw httpError('unsupported_media_type');
    // As for a send (body-checks.ts): a length over the limit, or a charset other than UTF-8, at once.
    checkBodyHeaders(req, res, BODY_LIMIT);
    await limit?.check(req, res);
    await parse(req, res, type);
    if (chat.hub.closed) throw httpError('shutting_down', undefined, { retryAfter: 1 });
    const { room, client, nickname, stopped } = parseTyping(req.body);
    chat.hub.typed(room, client, nickname, stopped, req.ip);
    res.set('Cache-Control', 'no-store').json({ status: 'ok' });
  };
}
