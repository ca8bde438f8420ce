/**
 * Who is typing, per room: an ephemeral event, never stored (docs/design.md,
 * "Who is here and who types"; docs/long-polling.md, "Ephemeral events").
 *
 * - `typed(room, client, nickname)`: someone types (their own `POST /typing`
 *   here, or another process's, from the bus). They count as typing for
 *   `ttlMs` after the last one.
 * - The room's waiting polls are woken (`wake`) with everyone typing there,
 *   at most once every `wakeMs`, however many type: a typist who starts
 *   while the room was woken less than `wakeMs` ago is told with the next
 *   wake. A typist who stops is told too, by the wake after they expire, so
 *   the pages drop them at once (an answer woken for typing alone names
 *   everyone still typing).
 * - `stopped(room, client)`: the person emptied their draft by hand. They
 *   are dropped, and the room told with the next wake.
 * - `arrived(room, messages)`: messages reached this process's log (its own
 *   sends, the bus, the store). Whoever wrote them under that nickname stops
 *   typing here at once, without a wake: the message itself tells the pages
 *   (client/typing.ts drops its author), and every later wake leaves them
 *   out. The message ends it, not a separate event, so nothing can be lost
 *   between them on the way to another process. Two browsers under one
 *   nickname both stop: the other one's next `POST /typing` brings it back.
 * - Bounded per answer and per address: a wake names the first
 *   `limits.maxTypistsNamed` typists (in the order they started) and counts
 *   the rest, so its typing part stays small however many type; and one
 *   client address has at most `perAddress` typists in a room at once (a
 *   new client id past it is not taken: the first ones hold their places
 *   until they stop or expire), so one address cannot fill the line with
 *   fake typists nor keep them up.
 * - A room is forgotten once nobody types and its last wake is `wakeMs`
 *   old: what is held is bounded by who typed within the last few seconds.
 */
import { limits, type Typist } from '../../protocol/protocol.ts';
import type { TagOf } from '../presence/tag.ts';
import type { TypingNow, TypingWake } from './body.ts';
import type { Clock, Timer } from './clock.ts';

export interface TypingOptions {
  clock: Clock;
  /** A room's polls are woken for typing at most this often (ms). */
  wakeMs: number;
  /** A typist counts this long after their last event (ms). */
  ttlMs: number;
  /** Typists one address may have in a room at once (0: no cap). */
  perAddress?: number;
  /** Typists named in a wake; the rest are counted. @default limits.maxTypistsNamed */
  maxNamed?: number;
  /** The tag answers name a typist by (server/presence/tag.ts). */
  tagOf: TagOf;
  /** Wakes the room's waiting polls with its typists (`Waiters.wake`). */
  wake(room: string, typing: TypingWake): void;
}

interface Typist1 {
  nickname: string;
  until: number;
  address: string | undefined;
  /** Made once, when they start: a room where nobody types makes none. */
  tag: string;
}

interface TypingRoom {
  /** By client id, in the order they started: the first named stays first. */
  typists: Map<string, Typist1>;
  /** Typists per address, for the addresses known. */
  byAddress: Map<string, number>;
  lastWake: number;
  /** Something changed that the room's polls were not told yet. */
  owed: boolean;
  timer: Timer | undefined;
}

export class Typing {
  readonly #rooms = new Map<string, TypingRoom>();
  readonly #options: TypingOptions;

  constructor(options: TypingOptions) {
    this.#options = options;
  }

  /** Takes the event; false when its address is at its cap in the room (nothing changed). */
  typed(name: string, client: string, nickname: string, address?: string): boolean {
    const { clock, ttlMs } = this.#options;
    const perAddress = this.#options.perAddress ?? 0;
    let room = this.#rooms.get(name);
    const known = room?.typists.get(client);
    // The first holder of a client id keeps it while it types: another
    // address naming the same id cannot rename it.
    if (
      known &&
      address !== undefined &&
      known.address !== undefined &&
      known.address !== address
    ) {
      return false;
    }
    if (
      room &&
      !known &&
      perAddress > 0 &&
      address !== undefined &&
      (room.byAddress.get(address) ?? 0) >= perAddress
    ) {
      return false;
    }
    if (!room) {
      room = {
        typists: new Map(),
        byAddress: new Map(),
        lastWake: Number.NEGATIVE_INFINITY,
        owed: false,
        timer: undefined,
      };
      this.#rooms.set(name, room);
    }
    const typist = room.typists.get(client);
    if (typist) {
      typist.nickname = nickname;
      typist.until = clock.now() + ttlMs;
    } else {
      const tag = this.#options.tagOf(name, client);
      room.typists.set(client, { nickname, until: clock.now() + ttlMs, address, tag });
      if (address !== undefined) {
        room.byAddress.set(address, (room.byAddress.get(address) ?? 0) + 1);
      }
    }
    // Each one is news, even from someone already typing: a page shows a
    // typist for a while after the last answer that named them, no longer.
    room.owed = true;
    this.#run(name, room);
    return true;
  }

  /** The person emptied their draft: they type no more, and the room is told. */
  stopped(name: string, client: string): void {
    const room = this.#rooms.get(name);
    if (!room || !drop(room, client)) return;
    room.owed = true;
    this.#run(name, room);
  }

  /**
   * Messages reached the room here: their authors stop typing, with no wake
   * of their own (the message tells the pages). A room where nobody types
   * costs one lookup: the send path stays as it was.
   */
  arrived(name: string, ring: readonly { nickname: string }[], from = 0): void {
    const room = this.#rooms.get(name);
    if (!room) return;
    for (let index = from; index < ring.length; index += 1) {
      const { nickname } = ring[index]!;
      for (const [client, typist] of room.typists) {
        if (typist.nickname === nickname) drop(room, client);
      }
    }
  }

  /** Who types in `room` now: the first `maxNamed`, and how many more. */
  typists(name: string): TypingWake {
    const room = this.#rooms.get(name);
    const all = room?.typists ?? new Map<string, Typist1>();
    const maxNamed = this.#options.maxNamed ?? limits.maxTypistsNamed;
    const named = (but: string | undefined): TypingNow => {
      const typists: Typist[] = [];
      for (const [client, { nickname, tag }] of all) {
        if (typists.length >= maxNamed) break;
        if (client !== but) typists.push({ nickname, client: tag });
      }
      const total = all.size - (but !== undefined && all.has(but) ? 1 : 0);
      return { typists, more: total - typists.length };
    };
    return {
      ...named(undefined),
      has: (client) => all.has(client),
      without: (client) => named(client),
    };
  }

  close(): void {
    for (const room of this.#rooms.values()) this.#options.clock.clearTimeout(room.timer);
    this.#rooms.clear();
  }

  /** Drops the expired, wakes the room if it owes a wake and may, then sets the next timer. */
  #run(name: string, room: TypingRoom): void {
    const { clock, wakeMs } = this.#options;
    const now = clock.now();
    for (const [client, { until }] of room.typists) {
      if (until > now) continue;
      drop(room, client);
      room.owed = true;
    }
    if (room.owed && now >= room.lastWake + wakeMs) {
      room.owed = false;
      room.lastWake = now;
      this.#options.wake(name, this.typists(name));
    }
    this.#arm(name, room);
  }

  /** One timer per room: the next wake it may owe, or the next typist to expire. */
  #arm(name: string, room: TypingRoom): void {
    const { clock, wakeMs } = this.#options;
    clock.clearTimeout(room.timer);
    room.timer = undefined;
    const free = room.lastWake + wakeMs;
    let at = room.owed ? free : Number.POSITIVE_INFINITY;
    for (const { until } of room.typists.values()) at = Math.min(at, until);
    const now = clock.now();
    if (at === Number.POSITIVE_INFINITY) {
      if (now >= free) {
        this.#rooms.delete(name);
        return;
      }
      at = free;
    }
    room.timer = clock.setTimeout(() => this.#run(name, room), Math.max(0, at - now));
    room.timer.unref?.();
  }
}

/** Drops a typist, and its place in its address's count. */
function drop(room: TypingRoom, client: string): boolean {
  const typist = room.typists.get(client);
  if (!typist) return false;
  room.typists.delete(client);
  const { address } = typist;
  if (address !== undefined) {
    const left = (room.byAddress.get(address) ?? 1) - 1;
    if (left > 0) room.byAddress.set(address, left);
    else room.byAddress.delete(address);
  }
  return true;
}
