/**
 * The bodies of poll answers, built with the room's online count and shared
 * wherever polls get the same answer (docs/design.md, "Rules that make
 * delivery correct", rule 5):
 * - `catchUp`: polls that catch up at once with the same cursor, while the
 *   room's head and online count stay put, share one body. Under sustained
 *   delivery most answers are such catch-ups. The cache holds one head per
 *   room, so it is as large as the ring at most, and it starts over past
 *   `CATCH_UP_ROOMS` rooms.
 * - `empty`: empty answers of one batch (timeouts, shutdown, a presence
 *   wake) share one body per room and cursor.
 */
import type { Message } from '../../protocol/protocol.ts';
import type { Presence } from '../presence/presence.ts';
import { type Body, recvBody } from './body.ts';
import { type MessageLog, PAGE_SIZE } from './message-log.ts';

/** Rooms whose catch-up bodies are kept at once; past it the cache starts over. */
const CATCH_UP_ROOMS = 1_000;

/** Empty bodies of one batch, by room, then by cursor. */
export type EmptyBodies = Map<string, Map<number, Body>>;

export class Answers {
  readonly #presence: Presence;
  readonly #messages: MessageLog;
  readonly #catchUps = new Map<
    string,
    { last: number; online: number; bodies: Map<number, Body> }
  >();

  constructor(presence: Presence, messages: MessageLog) {
    this.#presence = presence;
    this.#messages = messages;
    // A reset room's bodies are void; this listener runs before the waiters'.
    messages.onReset((room) => this.#catchUps.delete(room));
  }

  /** The answer for `messages` in `room`, with the room's online count. */
  body(room: string, messages: readonly Message[], cursor: number, reset = false): Body {
    return recvBody(messages, cursor, this.#presence.count(room), reset);
  }

  /** The answer to a poll that catches up at once with `messages` (after its cursor, up to the head). */
  catchUp(room: string, messages: readonly Message[]): Body {
    const last = messages[messages.length - 1]!.id;
    const online = this.#presence.count(room);
    if (messages.length >= PAGE_SIZE) return recvBody(messages, last, online);
    let cache = this.#catchUps.get(room);
    if (!cache || cache.last !== last || cache.online !== online) {
      if (!cache && this.#catchUps.size >= CATCH_UP_ROOMS) this.#catchUps.clear();
      cache = { last, online, bodies: new Map() };
      this.#catchUps.set(room, cache);
    }
    const since = messages[0]!.id - 1;
    let body = cache.bodies.get(since);
    if (!body) {
      body = recvBody(messages, last, online);
      cache.bodies.set(since, body);
    }
    return body;
  }

  /**
   * The empty answer for a poll in `room` at `cursor` (undefined: the 2011
   * client, shown the room's head), shared through `batch`.
   */
  empty(room: string, cursor: number | undefined, batch: EmptyBodies): Body {
    const at = cursor ?? this.#messages.lastId(room) ?? 0;
    let bodies = batch.get(room);
    if (!bodies) {
      bodies = new Map();
      batch.set(room, bodies);
    }
    let body = bodies.get(at);
    if (!body) {
      body = this.body(room, [], at);
      bodies.set(at, body);
    }
    return body;
  }
}
