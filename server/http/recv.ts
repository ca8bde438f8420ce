/**
 * `GET /recv`: the long-poll, parsed and answered in this one module, ahead
 * of Express (`entry.ts` says why and what that skips).
 *
 * With `since` (the cursor: the id of the last message the client has):
 * 1. answer at once with what came after it, from the message log when it
 *    can vouch for it, else from the store;
 * 2. answer at once with `reset` when the cursor is ahead of every message
 *    of the room (a reset database, deleted messages): the client reloads;
 * 3. answer at once, empty, a client the room had not seen, so a page shows
 *    the online count when it opens;
 * 4. otherwise hand the request to the waiters, which hold it until a
 *    message comes, the poll timeout passes, or the client goes away.
 * Without `since` (the 2011 client): wait for the next message.
 *
 * The store is read before waiting, so a client that was away (a network
 * blip, a restart, a poll that landed on another worker) gets what it
 * missed. The log is looked at again after the read: a message may have
 * arrived while we were reading, and the log only tells waiters.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQueryString } from 'node:querystring';
import type { Message } from '../../protocol/protocol.ts';
import { HttpError, httpError } from '../core/errors.ts';
import { PAGE_SIZE } from '../messages/message-log.ts';
import type { PollOutcome } from '../metrics/telemetry.ts';
import { writeBody, writeError } from './answer.ts';
import type { ChatContext } from './context.ts';
import { parseClient, parseId, parseRoom } from './validate.ts';
import type { Refusal } from './waiters.ts';
import { withTimeout } from './with-timeout.ts';

interface RecvQuery {
  room: string;
  since: number | undefined;
  client: string | undefined;
}

/** Returns the handler of every `GET /recv` (and `HEAD`, which Express passes on). */
export function createRecvHandler(chat: ChatContext) {
  const { messages, waiters, presence, store, config, telemetry } = chat;

  function ended(
    req: IncomingMessage,
    room: string,
    outcome: PollOutcome,
    status: number,
    started: number,
    code?: string,
  ): void {
    telemetry.pollEnded({ req, room, outcome, status, ms: Date.now() - started, code });
  }

  function answer(
    req: IncomingMessage,
    res: ServerResponse,
    room: string,
    found: readonly Message[],
    cursor: number,
    outcome: PollOutcome,
    started: number,
  ): void {
    // A catch-up shares its body with the room's other polls at that cursor.
    const body =
      outcome === 'message' && found.length > 0
        ? waiters.catchUpBody(room, found)
        : waiters.body(room, found, cursor, outcome === 'reset');
    if (writeBody(res, body) && body.count > 0) telemetry.delivered(body.count);
    ended(req, room, outcome, 200, started);
  }

  /** What the store says after `since`, when the log cannot say it alone. */
  async function readAfter(room: string, since: number): Promise<Message[] | undefined> {
    try {
      const found = await withTimeout(
        store.after(room, since, PAGE_SIZE),
        config.storeTimeoutMs,
        'Reading messages',
      );
      if (found.length < PAGE_SIZE) messages.seed(room, found);
      chat.storeState?.ok();
      return found;
    } catch (error) {
      // The store is down: wait all the same. The client sees no error, and
      // its next poll catches up once the store is back. Logged once per
      // outage, not once per poll.
      if (chat.storeState) chat.storeState.failed(error);
      else chat.log('warn', `recv: catch-up read failed for ${room}`, error);
      return undefined;
    }
  }

  /**
   * The room's head when the cursor is ahead of it (the client must reset),
   * undefined when the cursor is fine. Asked only when the log knows no id at
   * or past the cursor, so a poll at the head of a known room costs nothing.
   */
  async function resetHead(room: string, since: number): Promise<number | undefined> {
    if (since === 0 || (messages.lastId(room) ?? -1) >= since) return undefined;
    try {
      const head =
        (await withTimeout(store.heads([room]), config.storeTimeoutMs, 'Reading the head')).get(
          room,
        ) ?? 0;
      if (head >= since) {
        messages.noteHead(room, head);
        return undefined;
      }
      if ((messages.lastId(room) ?? 0) > head) messages.reset(room, head);
      return head;
    } catch {
      return undefined; // The store is down: no verdict; the poll waits.
    }
  }

  async function serve(req: IncomingMessage, res: ServerResponse, rawQuery: string): Promise<void> {
    const started = Date.now();
    let query: RecvQuery;
    try {
      query = parseRecvQuery(rawQuery);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      writeError(res, error);
      ended(req, '', 'error', error.status, started, error.code);
      return;
    }
    const { room, since, client } = query;
    const refuse = (error: HttpError): void => {
      writeError(res, error);
      ended(req, room, 'error', error.status, started, error.code);
    };
    // Refused early when no poll could wait; a poll's own address is
    // checked only when it is to wait (`waiters.wait`): most polls are
    // answered at once.
    const early = waiters.refusal();
    if (early !== undefined) return refuse(refusalError(early));
    const fresh = client !== undefined && presence.touch(room, client);

    if (since !== undefined) {
      let found = messages.catchUp(room, since);
      if (found !== undefined && found.length > 0) {
        // Answer at the end of this turn of the event loop, not at once: the
        // sends read later in the same turn go into the same answer, so there
        // are fewer answers (writes) per delivered message (bench T6: 4 → 6
        // messages an answer, server CPU per delivery 13 → 9 µs). One turn of
        // latency at most.
        deferred.push({ req, res, rawQuery, room, since, started });
        if (deferred.length === 1) setImmediate(answerDeferred);
        return;
      }
      if (found === undefined) {
        const read = await readAfter(room, since);
        found = read ?? [];
        if (found.length === 0) found = messages.catchUp(room, since) ?? [];
        if (found.length === 0 && read !== undefined) {
          const head = await resetHead(room, since);
          if (head !== undefined) return answer(req, res, room, [], head, 'reset', started);
        }
      }
      if (found.length > 0) {
        return answer(req, res, room, found, found[found.length - 1]!.id, 'message', started);
      }
      if (fresh) return answer(req, res, room, [], since, 'presence', started);
    }
    const refused = waiters.wait(res, room, since, client);
    if (refused !== undefined) refuse(refusalError(refused));
  }

  /** Catch-ups found in the log, answered together at the end of the turn. */
  let deferred: Array<{
    req: IncomingMessage;
    res: ServerResponse;
    rawQuery: string;
    room: string;
    since: number;
    started: number;
  }> = [];
  function answerDeferred(): void {
    const polls = deferred;
    deferred = [];
    for (const { req, res, rawQuery, room, since, started } of polls) {
      if (res.destroyed) {
        ended(req, room, 'gone', 0, started); // Gone meanwhile: nothing holds it.
        continue;
      }
      // The ring only grows within a turn; a room dropped meanwhile is asked again.
      const found = messages.catchUp(room, since);
      if (found === undefined || found.length === 0) {
        handle(req, res, rawQuery);
        continue;
      }
      answer(req, res, room, found, found[found.length - 1]!.id, 'message', started);
    }
  }

  /** Every poll: answered whatever happens, an unexpected error included. */
  function handle(req: IncomingMessage, res: ServerResponse, rawQuery: string): void {
    serve(req, res, rawQuery).catch((error: unknown) => {
      chat.log('error', 'recv: unexpected failure', error);
      writeError(res, httpError('internal_error', undefined, { cause: error }));
    });
  }

  return {
    /**
     * Takes every `GET /recv` (returns true) and nothing else (false): the
     * server's request listener offers it each request first (`entry.ts`).
     */
    lane(req: IncomingMessage, res: ServerResponse): boolean {
      if (req.method !== 'GET') return false;
      const url = req.url ?? '';
      const mark = url.indexOf('?');
      if ((mark < 0 ? url : url.slice(0, mark)) !== '/recv') return false;
      handle(req, res, mark < 0 ? '' : url.slice(mark + 1));
      return true;
    },
    /** `HEAD /recv`, routed by Express: the same answer, without its body. */
    route(req: IncomingMessage, res: ServerResponse): void {
      const url = req.url ?? '';
      const mark = url.indexOf('?');
      handle(req, res, mark < 0 ? '' : url.slice(mark + 1));
    },
  };
}

/**
 * The query, parsed once with Node's `querystring` (Express's default
 * parser, so both paths read a query alike) and validated at the edge.
 */
export function parseRecvQuery(rawQuery: string): RecvQuery {
  const query = parseQueryString(rawQuery);
  return {
    room: parseRoom(query.room),
    since: parseId(query.since),
    client: parseClient(query.client),
  };
}

/** The contract's answer to a poll the waiters would not take. */
function refusalError(refusal: Refusal): HttpError {
  switch (refusal) {
    case 'closed':
      return httpError('shutting_down', undefined, { retryAfter: 1 });
    case 'overloaded':
      return httpError('overloaded', undefined, { retryAfter: 5 });
    case 'address_limit':
      return httpError('too_many_polls', undefined, { retryAfter: 5 });
  }
}
