/**
 * `POST /send`: check where it comes from, limit, parse, validate, then
 * hand it to the hub (`hub.send`, server/hub/hub.ts), which stores it and
 * tells every process; this file parses and answers.
 * A hot route (hot-routes.ts): the same handler whether the lane or the
 * Express app hands it the request.
 *
 * The answer waits for the store: a message is acknowledged only once it is
 * durable (rule 1). A store that fails or does not answer within
 * `STORE_TIMEOUT_MS` gives 503 with `Retry-After`, and the client retries
 * with the same `key`. If that slow write does land after all, it is still
 * published, so the message shows, and the retry finds it by its key.
 *
 * The body is read by the one body reader (body-reader.ts), with the
 * checks of `POST /typing` in the same order; the send limit counts each
 * person apart (a share per `client` id behind an address, under the
 * address's ceiling: rate-limit.ts), so it runs once the body is read, for
 * its `client` field, and before the body is validated.
 *
 * Why a hot route: a sender waits for this answer before its next message,
 * so its cost bounds how fast a room's messages can come (docs/design.md,
 * "The request pipeline"). It writes the whole answer itself: `JSON_HEADERS`,
 * `X-Request-Id`, the `RateLimit` headers, and a request log line
 * (server/metrics/telemetry.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SendAnswer } from '../../protocol/protocol.ts';
import { clientAddress, clientHost } from '../core/client-address.ts';
import { httpError } from '../core/errors.ts';
import type { ChatMetrics } from '../metrics/metrics.ts';
import { requestId } from '../metrics/request-log.ts';
import { writeError, writeJson } from './answer.ts';
import { bodyType, readLimitedBody } from './body-reader.ts';
import { ByteBudget } from './byte-budget.ts';
import type { ChatContext } from './context.ts';
import { createCrossSiteCheck } from './cross-site.ts';
import { clientGone, toHttpError } from './error-handler.ts';
import type { SendLimit } from './rate-limit.ts';
import { parseNewMessage, shareClient } from './validate.ts';

export interface SendOptions {
  limit?: SendLimit | undefined;
  metrics?: ChatMetrics | undefined;
}

/** Returns the handler of `POST /send`. */
export function createSendHandler(
  chat: ChatContext,
  options: SendOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const checkSameSite = createCrossSiteCheck(
    chat.config.allowedOrigins,
    clientHost(chat.config.trustProxy),
  );
  const { sendKbPerHour, sendKbPerHourPerClient, trustProxy, forwardedForMaxBytes } = chat.config;
  const bytes =
    sendKbPerHour > 0
      ? new ByteBudget({
          kbPerHour: sendKbPerHour,
          kbPerHourPerClient: sendKbPerHourPerClient,
          addressOf: clientAddress(trustProxy, forwardedForMaxBytes),
        })
      : undefined;
  const { limit, metrics } = options;
  const { telemetry } = chat;

  async function send(
    req: IncomingMessage,
    res: ServerResponse,
    started: number,
  ): Promise<SendAnswer> {
    checkSameSite(req);
    const type = bodyType(req);
    const body = await readLimitedBody(req, res, type, limit);
    if (chat.hub.closed) throw httpError('shutting_down', undefined, { retryAfter: 1 });
    const input = parseNewMessage(body);
    bytes?.charge(
      req,
      Buffer.byteLength(input.text) + Buffer.byteLength(input.nickname),
      shareClient(body),
    );
    // Stored then posted by the hub, within the one store deadline.
    const { message, created } = await chat.hub.send(input);
    if (created) metrics?.sent.inc();
    metrics?.sendSeconds.observe((performance.now() - started) / 1000);
    return { status: 'ok', id: message.id, message };
  }

  function answer(req: IncomingMessage, res: ServerResponse, sent: SendAnswer, started: number) {
    let status = 0;
    if (!res.writableEnded && !res.destroyed) {
      writeJson(res, 200, JSON.stringify(sent));
      status = 200;
    }
    telemetry.requestEnded({ req, path: '/send', status, ms: performance.now() - started });
  }

  function refuse(req: IncomingMessage, res: ServerResponse, error: unknown, started: number) {
    const ms = performance.now() - started;
    if (clientGone(error, req)) {
      // Nobody to answer (most often a hang-up mid-upload): not our error.
      res.destroy();
      telemetry.requestEnded({ req, path: '/send', status: 0, ms });
      return;
    }
    const refusal = toHttpError(error);
    writeError(res, refusal);
    telemetry.requestEnded({
      req,
      path: '/send',
      status: res.headersSent ? refusal.status : 0,
      ms,
      code: refusal.code,
      bug: refusal.status === 500 ? error : undefined,
    });
  }

  return (req, res) => {
    const started = performance.now();
    // On every answer, errors included (writeHead keeps what setHeader set).
    res.setHeader('X-Request-Id', requestId(req));
    send(req, res, started).then(
      (sent) => answer(req, res, sent, started),
      (error: unknown) => refuse(req, res, error, started),
    );
  };
}
