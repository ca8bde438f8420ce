/**
 * `POST /send`: validate, store, then tell every process.
 *
 * The answer waits for the store: a message is acknowledged only once it is
 * durable (rule 1). A store that fails or does not answer within
 * `STORE_TIMEOUT_MS` gives 503 with `Retry-After`, and the client retries
 * with the same `key`. If that slow write does land after all, it is still
 * published, so the message shows, and the retry finds it by its key.
 */
import express, { type Request, type RequestHandler, type Response } from 'express';
import { limits } from '../../../protocol/protocol.ts';
import { httpError } from '../../errors.ts';
import type { AppendResult } from '../../store/store.ts';
import type { ChatContext } from '../context.ts';
import { createCrossSiteCheck } from '../cross-site.ts';
import { createRateLimit } from '../rate-limit.ts';
import { parseNewMessage } from '../validate.ts';
import { withTimeout } from '../with-timeout.ts';

export const BODY_LIMIT = limits.maxBodyBytes;

export function sendRoute(chat: ChatContext): RequestHandler[] {
  const checkSameSite = createCrossSiteCheck(chat.config.allowedOrigins);
  const rateLimit = createRateLimit(chat.config.sendRatePerSec, chat.config.sendBurst);
  const acceptedTypes = ['application/json', 'application/x-www-form-urlencoded'];

  const guard: RequestHandler = (req, _res, next) => {
    checkSameSite(req);
    if (!req.is(acceptedTypes)) throw httpError('unsupported_media_type');
    next();
  };

  const send = async (req: Request, res: Response): Promise<void> => {
    if (chat.waiters.closed) throw httpError('shutting_down', undefined, { retryAfter: 1 });
    const input = parseNewMessage(req.body);
    rateLimit.take(req.ip ?? 'unknown');
    const appended = chat.store.append(input);
    appended.then(publish, () => {});
    const { message } = await withTimeout(
      appended,
      chat.config.storeTimeoutMs,
      'Storing the message',
    );
    res.json({ status: 'ok', id: message.id, message });
  };

  // A repeat of a key is published again: the first send's process may have
  // died between storing and publishing. Hubs drop what they already have.
  function publish({ message }: AppendResult): void {
    try {
      chat.messages.accept(message);
      chat.bus.publish(message);
    } catch (error) {
      // The message is stored: polls with a cursor still catch it up.
      chat.log('error', `send: publishing ${message.room}#${message.id} failed`, error);
    }
  }

  return [
    guard,
    express.json({ limit: BODY_LIMIT }),
    express.urlencoded({ limit: BODY_LIMIT, extended: false, parameterLimit: 20 }),
    send,
  ];
}
