/**
 * `POST /send`: check where it comes from, limit, parse, validate, store,
 * then tell every process.
 *
 * The answer waits for the store: a message is acknowledged only once it is
 * durable (rule 1). A store that fails or does not answer within
 * `STORE_TIMEOUT_MS` gives 503 with `Retry-After`, and the client retries
 * with the same `key`. If that slow write does land after all, it is still
 * published, so the message shows, and the retry finds it by its key.
 *
 * The send limit runs before the body is read: a client past its limit
 * costs no parsing. Every send it lets through counts, valid or not.
 *
 * Its answers carry the JSON headers of `/recv` and `/time` (answer.ts,
 * `JSON_HEADERS`), not helmet's dozen: the route is mounted ahead of helmet
 * (app.ts). Those headers act on documents, and a sender waits for its
 * answer: in bench T6, where each sender waits for its acknowledgement, the
 * chat delivered 1.14–1.25× the in-memory baseline with them (medians of 3
 * rounds, 3 runs) and 1.17–1.90× without (6 runs, two of them full benches,
 * on a machine whose speed swings by ±15%).
 */
import express, { type Request, type RequestHandler, type Response } from 'express';
import { limits, type SendAnswer } from '../../../protocol/protocol.ts';
import { httpError } from '../../errors.ts';
import type { ChatMetrics } from '../../metrics/metrics.ts';
import type { OutageState } from '../../metrics/outage.ts';
import type { AppendResult } from '../../store/store.ts';
import { JSON_HEADERS } from '../answer.ts';
import type { ChatContext } from '../context.ts';
import { createCrossSiteCheck } from '../cross-site.ts';
import type { SendLimit } from '../rate-limit.ts';
import { parseNewMessage } from '../validate.ts';
import { withTimeout } from '../with-timeout.ts';

export const BODY_LIMIT = limits.maxBodyBytes;

export interface SendOptions {
  limit?: SendLimit | undefined;
  metrics?: ChatMetrics | undefined;
  store?: OutageState | undefined;
}

export function sendRoute(chat: ChatContext, options: SendOptions = {}): RequestHandler[] {
  const checkSameSite = createCrossSiteCheck(chat.config.allowedOrigins);
  const acceptedTypes = ['application/json', 'application/x-www-form-urlencoded'];
  const { metrics, store } = options;

  const checkRequest: RequestHandler = (req, res, next) => {
    res.locals.sendStarted = performance.now();
    // Every answer, errors included, has the JSON API's headers, not helmet's
    // (the route is ahead of helmet: entry.ts says which headers and why).
    res.set(JSON_HEADERS);
    checkSameSite(req);
    if (!req.is(acceptedTypes)) throw httpError('unsupported_media_type');
    next();
  };

  const send = async (req: Request, res: Response): Promise<void> => {
    if (chat.waiters.closed) throw httpError('shutting_down', undefined, { retryAfter: 1 });
    const input = parseNewMessage(req.body);
    const appended = chat.store.append(input);
    appended.then(publish, () => {});
    const { message, created } = await withTimeout(
      appended,
      chat.config.storeTimeoutMs,
      'Storing the message',
    );
    store?.ok();
    if (created) metrics?.sent.inc();
    metrics?.sendSeconds.observe((performance.now() - res.locals.sendStarted) / 1000);
    res.json({ status: 'ok', id: message.id, message } satisfies SendAnswer);
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
    checkRequest,
    ...(options.limit ? [options.limit.middleware] : []),
    express.json({ limit: BODY_LIMIT }),
    express.urlencoded({ limit: BODY_LIMIT, extended: false, parameterLimit: 20 }),
    send,
  ];
}
