/**
 * The wakes: which of a room's waiting polls an answer without a message
 * goes to, and with what body (docs/design.md, "The hub"). A wake is a
 * choice, `WakeChoice`: for each waiter, its body, or undefined to let it
 * wait on. `Waiters.wake` answers the waiters a choice picks; the registry,
 * delivery and the leave delay stay in waiters.ts.
 *
 * - `presenceWake`: the waiters whose client was shown another online
 *   count, or holds another version of the room's list, than the room's
 *   now get an empty answer and poll again.
 * - `typingWake` (server/hub/typing.ts): every waiter with a cursor gets an
 *   empty answer naming who types (`typingOnly`), the room's list when it
 *   is news to it, and its cursor unchanged. The 2011 client (no cursor)
 *   knows nothing of typing and waits on for a message.
 */
import type { Presence } from '../presence/presence.ts';
import { type Answers, type EmptyBodies, NO_LIST } from './answers.ts';
import type { Body, TypingWake } from './body.ts';

/** What a wake reads of a waiting poll. */
export interface WakeWaiter {
  cursor: number | undefined;
  client: string | undefined;
  /** The online count the client was last shown. */
  online: number;
  /** The version of the room's list the client holds; undefined: none. */
  people: number | undefined;
}

/** A waiter's body, or undefined when the wake passes it by. */
export type WakeChoice = (waiter: WakeWaiter) => Body | undefined;

/** Rooms with more waiters than this hear of online changes with their next answer only. */
export const PRESENCE_NOTIFY_MAX_WAITERS = 1_000;

/** The presence wake of `room` as it is now; undefined when the room is too large to wake. */
export function presenceWake(
  room: string,
  waiters: number,
  presence: Presence,
  answers: Answers,
): WakeChoice | undefined {
  if (waiters > PRESENCE_NOTIFY_MAX_WAITERS) return undefined;
  const online = presence.count(room);
  const version = presence.people(room).version;
  const empties: EmptyBodies = new Map();
  return (waiter) => {
    // A client that sent no version is not woken for the list: it gets it
    // with its next answer (an old client would be woken again and again).
    const known = waiter.people;
    const listed = known === undefined || known === NO_LIST || known === version;
    if (waiter.online === online && listed) return undefined;
    return answers.empty(room, waiter.cursor, waiter.people, empties);
  };
}

/** The typing wake of `room`, naming `typing`. */
export function typingWake(room: string, typing: TypingWake, answers: Answers): WakeChoice {
  const empties: EmptyBodies = new Map();
  return (waiter) => {
    if (waiter.cursor === undefined) return undefined;
    // A poll is not told its own typing: its body is its own (the few
    // polls of the typists' browsers), every other poll shares one.
    const own = waiter.client !== undefined && typing.has(waiter.client);
    return answers.empty(
      room,
      waiter.cursor,
      waiter.people,
      own ? new Map() : empties,
      own ? typing.without(waiter.client as string) : typing,
    );
  };
}
