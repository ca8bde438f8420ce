/**
 * `GET /recv`: the long-poll's handler, a hot route (hot-routes.ts). It parses and checks the query
 * at the edge, hands the poll to the hub (server/hub/hub.ts, which answers it
 * now or when something comes), and writes the contract's error when the
 * hub refuses it. Delivery itself is the hub's (docs/design.md, "The hub").
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQueryString } from 'node:querystring';
import { HttpError, httpError } from '../core/errors.ts';
import type { PollExtras, Refusal } from '../hub/hub.ts';
import { writeError } from './answer.ts';
import type { ChatContext } from './context.ts';
import { parseClient, parseId, parsePeopleVersion, parseRoom, pollNickname } from './validate.ts';

/**
 * The poll's client id if it is to be counted online, else undefined: the
 * per-address cap (server/presence/address-cap.ts), asked once the query is
 * parsed, so nothing rewrites the request.
 */
export type CountedClient = (req: IncomingMessage, client: string) => string | undefined;

interface RecvQuery {
  room: string;
  since: number | undefined;
  client: string | undefined;
  /** Who is here (server/presence/people.ts): the poll's nickname and list version. */
  extras: PollExtras;
}

/**
 * Returns the handler of every `/recv` poll (GET, and HEAD, whose body Node
 * leaves out), given the raw query string after `?`.
 */
export function createRecvHandler(
  chat: ChatContext,
  counted: CountedClient = (_req, client) => client,
): (req: IncomingMessage, res: ServerResponse, rawQuery: string) => void {
  const { hub, telemetry } = chat;

  function refuse(
    req: IncomingMessage,
    res: ServerResponse,
    room: string,
    error: HttpError,
    started: number,
  ): void {
    writeError(res, error);
    telemetry.pollEnded({
      req,
      room,
      outcome: 'error',
      status: error.status,
      ms: Date.now() - started,
      code: error.code,
    });
  }

  function failed(res: ServerResponse, error: unknown): void {
    chat.log('error', 'recv: unexpected failure', error);
    writeError(res, httpError('internal_error', undefined, { cause: error }));
  }

  /** Every poll: answered whatever happens, an unexpected error included. */
  return (req, res, rawQuery) => {
    const started = Date.now();
    let query: RecvQuery;
    try {
      query = parseRecvQuery(rawQuery);
    } catch (error) {
      if (error instanceof HttpError) refuse(req, res, '', error, started);
      else failed(res, error);
      return;
    }
    const { room, since, extras } = query;
    const client = query.client === undefined ? undefined : counted(req, query.client);
    hub.poll(room, since, client, res, extras).then(
      (refused) => {
        if (refused !== undefined) refuse(req, res, room, refusalError(refused), started);
      },
      (error: unknown) => failed(res, error),
    );
  };
}

/**
 * The query, parsed once with Node's `querystring` (Express's default
 * parser, so both paths read a query alike) and validated at the edge. A
 * bad `nickname` or `people` is left out rather than refused (validate.ts).
 */
export function parseRecvQuery(rawQuery: string): RecvQuery {
  const query = parseQueryString(rawQuery);
  return {
    room: parseRoom(query.room),
    since: parseId(query.since),
    client: parseClient(query.client),
    extras: { nickname: pollNickname(query.nickname), people: parsePeopleVersion(query.people) },
  };
}

/** The contract's answer to a poll the hub would not take. */
function refusalError(refusal: Refusal): HttpError {
  switch (refusal) {
    case 'closed':
      return httpError('shutting_down', undefined, { retryAfter: 1 });
    case 'overloaded':
      return httpError('overloaded', undefined, { retryAfter: 5 });
    case 'address_limit':
    case 'client_limit':
      return httpError('too_many_polls', undefined, { retryAfter: 5 });
  }
}
