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
import type { Message, People } from '../../protocol/protocol.ts';
import type { Presence } from '../presence/presence.ts';
import { type Body, recvBody, type TypingNow } from './body.ts';
import { type MessageLog, PAGE_SIZE } from './message-log.ts';

/** Rooms whose catch-up bodies are kept at once; past it the cache starts over. */
const CATCH_UP_ROOMS = 1_000;

/** Bodies by cursor: without the room's list, and with it. */
type ByCursor = [Map<number, Body>, Map<number, Body>];

/** Empty bodies of one batch, by room (with its list, read once), then by cursor. */
export type EmptyBodies = Map<string, { list: People; bodies: ByCursor }>;

/**
 * What a poll without a `client` id holds in place of a list version: it is
 * never sent the list (the 2011 page, scripts, the bench), so their answers
 * stay as they were.
 */
export const NO_LIST = -1;

/**
 * Whether a poll that holds list `known` (its `people=`, undefined when it
 * sent none) is sent the room's list `people`: only when it is news.
 */
export function listFor(people: People, known: number | undefined): People | undefined {
  return known === people.version || known === NO_LIST ? undefined : people;
}

export class Answers {
  readonly #presence: Presence;
  readonly #messages: MessageLog;
  readonly #catchUps = new Map<
    string,
    { last: number; online: number; version: number; bodies: ByCursor }
  >();

  constructor(presence: Presence, messages: MessageLog) {
    this.#presence = presence;
    this.#messages = messages;
    // A reset room's bodies are void; this listener runs before the waiters'.
    messages.onReset((room) => this.#catchUps.delete(room));
  }

  /** The room's list of nicknames now. */
  people(room: string): People {
    return this.#presence.people(room);
  }

  /**
   * The answer for `messages` in `room`, with the room's online count, and
   * its list when `people` is given (`listFor`).
   */
  body(
    room: string,
    messages: readonly Message[],
    cursor: number,
    extras: {
      reset?: boolean;
      expired?: boolean;
      people?: People | undefined;
      typing?: TypingNow;
    } = {},
  ): Body {
    return recvBody(messages, cursor, this.#presence.count(room), extras);
  }

  /**
   * The answer to a poll that catches up at once with `messages` (after its
   * cursor, up to the head), for a poll that holds list `known`.
   */
  catchUp(room: string, messages: readonly Message[], known: number | undefined): Body {
    const last = messages[messages.length - 1]!.id;
    const online = this.#presence.count(room);
    const list = this.#presence.people(room);
    const people = listFor(list, known);
    if (messages.length >= PAGE_SIZE) return recvBody(messages, last, online, { people });
    let cache = this.#catchUps.get(room);
    if (
      !cache ||
      cache.last !== last ||
      cache.online !== online ||
      cache.version !== list.version
    ) {
      if (!cache && this.#catchUps.size >= CATCH_UP_ROOMS) this.#catchUps.clear();
      cache = { last, online, version: list.version, bodies: [new Map(), new Map()] };
      this.#catchUps.set(room, cache);
    }
    const since = messages[0]!.id - 1;
    const bodies = cache.bodies[people ? 1 : 0];
    let body = bodies.get(since);
    if (!body) {
      body = recvBody(messages, last, online, { people });
      bodies.set(since, body);
    }
    return body;
  }

  /**
   * The empty answer for a poll in `room` at `cursor` (undefined: the 2011
   * client, shown the room's head) that holds list `known`, shared through
   * `batch`. A typing wake gives `typing`, the same for its whole batch.
   */
  empty(
    room: string,
    cursor: number | undefined,
    known: number | undefined,
    batch: EmptyBodies,
    typing?: TypingNow,
  ): Body {
    const at = cursor ?? this.#messages.lastId(room) ?? 0;
    let inRoom = batch.get(room);
    if (!inRoom) {
      inRoom = { list: this.#presence.people(room), bodies: [new Map(), new Map()] };
      batch.set(room, inRoom);
    }
    const people = listFor(inRoom.list, known);
    const bodies = inRoom.bodies[people ? 1 : 0];
    let body = bodies.get(at);
    if (!body) {
      body = this.body(room, [], at, { people, typing });
      bodies.set(at, body);
    }
    return body;
  }
}
