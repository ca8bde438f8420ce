/**
 * The waiting polls of one process: each poll that had nothing to answer
 * yet, held by room with the cursor its client sent, until the message log
 * advances past that cursor, the poll timeout passes, the client goes away,
 * the room is woken (its online count changed), or the server shuts down
 * (docs/design.md, "Rules that make delivery correct", rules 3 to 5).
 *
 * - No leaks. A waiter is removed on every exit (`#remove`), and a client
 *   that goes away frees its waiter at once (`#onClose`).
 * - Every waiter ends: one queue and one timer (`deadline-queue.ts`).
 * - Serialise once. Waiters of a room that share a cursor get the very same
 *   body; waiters behind the log's ring share one store read per cursor.
 * - Fair share: `maxPerClient` per browser (`client-share.ts`), then
 *   `maxPerAddress` per address (`address-count.ts`), and `maxWaiters` in
 *   the process.
 */
import type { Message } from '../../protocol/protocol.ts';
import type { Presence } from '../presence/presence.ts';
import { AddressCount } from './address-count.ts';
import { type Answers, type EmptyBodies, listFor } from './answers.ts';
import type { Body, TypingWake } from './body.ts';
import { ClientShare } from './client-share.ts';
import type { Clock, Timer } from './clock.ts';
import { DeadlineQueue } from './deadline-queue.ts';
import { type MessageLog, PAGE_SIZE } from './message-log.ts';
import type { Replies, Reply } from './reply.ts';
import type { PollEnded, PollEvents } from './report.ts';
import type { StoreReads } from './store-reads.ts';
import { presenceWake, typingWake, type WakeChoice } from './wakes.ts';

export interface WaitersOptions<R extends Reply> {
  messages: MessageLog;
  answers: Answers;
  reads: StoreReads;
  presence: Presence;
  /** How a poll is answered, and its client's address (server/http/poll-reply.ts). */
  replies: Replies<R>;
  events: PollEvents<R>;
  clock: Clock;
  pollTimeoutMs: number;
  /** Waiting polls this process holds at most. */
  maxWaiters: number;
  /** Waiting polls one client address holds at most; 0: no limit. */
  maxPerAddress: number;
  /** Waiting polls one client id (or an address's polls without one) holds at most; 0: no limit. */
  maxPerClient?: number | undefined;
  /** How often the online count of rooms with waiters is checked; 0: never. */
  presenceNotifyMs: number;
}

/** How long a client whose poll closed stays counted, waiting for its next poll (`#leaveSoon`). */
export const LEAVE_DELAY_MS = 1_000;

/**
 * How long a presence notice waits for a shared view's fresh counts before
 * it reads what it has (`#notice`): above a sync's round trip, well under
 * `PRESENCE_NOTIFY_MS`.
 */
export const REFRESH_WAIT_MS = 500;

interface Waiter<R> {
  reply: R;
  room: WaitingRoom<R>;
  /** The id of the last message the client has; undefined for the 2011 client ("the next message"). */
  cursor: number | undefined;
  client: string | undefined;
  /** The address it is counted under while polls are counted by address. */
  address: string | undefined;
  /** The share it counts in (`client-share.ts`). */
  share?: string | undefined;
  deadline: number;
  /** The online count the client was last shown. */
  online: number;
  /** The version of the room's list the client holds (`people=`); undefined: none. */
  people: number | undefined;
}

interface WaitingRoom<R> {
  name: string;
  waiters: Set<Waiter<R>>;
}

type Outcome = PollEnded<unknown>['outcome'];

/** Why a poll could not wait. */
export type Refusal = 'closed' | 'overloaded' | 'address_limit' | 'client_limit';

const WAITER = Symbol('waiter');
type Tracked<R> = R & { [WAITER]?: Waiter<R> | undefined };

export class Waiters<R extends Reply> {
  readonly #rooms = new Map<string, WaitingRoom<R>>();
  readonly #queue: DeadlineQueue<Waiter<R>>;
  readonly #addresses: AddressCount<R>;
  readonly #shares: ClientShare<R>;
  readonly #options: WaitersOptions<R>;
  readonly #presenceTimer: Timer | undefined;
  /** A notice waits for a shared view's fresh counts (`#notice`). */
  #refreshing = false;
  #closed = false;
  /**
   * The one `close` listener of every waiting reply (no closure per poll,
   * and no field per waiter to find this `Waiters`): `close` before the
   * answer means the client went away, and its waiter goes.
   */
  readonly #onClose: (this: Tracked<R>) => void;

  constructor(options: WaitersOptions<R>) {
    this.#options = options;
    this.#queue = new DeadlineQueue(options.clock, (now) => this.#onDue(now));
    this.#addresses = new AddressCount(options.maxPerAddress, (reply) =>
      options.replies.addressOf(reply),
    );
    this.#shares = new ClientShare(
      options.maxPerClient ?? 0,
      (reply) => options.replies.addressOf(reply),
      (reply) => options.replies.shareOf?.(reply),
    );
    const gone = (waiter: Waiter<R>): void => {
      this.#remove(waiter);
      if (waiter.client !== undefined) this.#leaveSoon(waiter.room.name, waiter.client);
      this.#ended(waiter, 'gone');
    };
    this.#onClose = function (this: Tracked<R>): void {
      const waiter = this[WAITER];
      if (waiter) gone(waiter);
    };
    options.messages.onAdvance((room, ring, from) => this.#deliver(room, ring, from));
    options.messages.onReset((room, head) => this.#onReset(room, head));
    if (options.presenceNotifyMs > 0) {
      this.#presenceTimer = options.clock.setInterval(
        () => this.#notice(),
        options.presenceNotifyMs,
      );
      this.#presenceTimer.unref();
    }
  }

  /**
   * A client whose poll closed leaves the room `LEAVE_DELAY_MS` later, unless
   * a poll of its waits by then. A browser's tabs share its client id, and
   * when the tab that polls closes, the next one's poll may arrive after
   * that close (or still be reading its catch-up): leaving at once would
   * show everyone else the browser gone and back (docs/design.md, "The hub").
   */
  #leaveSoon(room: string, client: string): void {
    const { clock, presence } = this.#options;
    const timer = clock.setTimeout(() => {
      if (this.#closed) return;
      const waiting = this.#rooms.get(room);
      if (waiting && stillPolls(waiting, client)) return;
      presence.leave(room, client);
    }, LEAVE_DELAY_MS);
    timer.unref?.();
  }

  /** Waiting polls in this process. */
  get size(): number {
    return this.#queue.size;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Whether polls wait in `room` (the message log keeps such rooms). */
  isWatched(room: string): boolean {
    return this.#rooms.has(room);
  }

  /**
   * Rooms with waiters, each with the smallest cursor waiting there: where
   * the store watch looks for messages this process was not told about.
   */
  *watched(): Iterable<{ room: string; floor: number | undefined }> {
    for (const room of this.#rooms.values()) {
      let floor: number | undefined;
      for (const waiter of room.waiters) {
        if (waiter.cursor !== undefined && (floor === undefined || waiter.cursor < floor)) {
          floor = waiter.cursor;
        }
      }
      yield { room: room.name, floor };
    }
  }

  /** Why no poll could wait now, if none could (a poll's own address is checked by `wait`). */
  refusal(): Exclude<Refusal, 'address_limit' | 'client_limit'> | undefined {
    if (this.#closed) return 'closed';
    if (this.#queue.size >= this.#options.maxWaiters) return 'overloaded';
    return undefined;
  }

  /**
   * Holds `reply` until a message after `cursor` arrives, the poll timeout
   * passes, the client goes away, the room is woken, or shutdown. Returns
   * why it did not, when it refused the poll: the caller answers it.
   */
  wait(
    reply: R,
    roomName: string,
    cursor: number | undefined,
    client: string | undefined,
    people?: number,
  ): Refusal | undefined {
    const refused = this.refusal();
    if (refused !== undefined) return refused;
    const address = this.#addresses.toCount(reply, this.#queue.values(), this.#queue.size);
    if (this.#addresses.full(address)) return 'address_limit';
    if (reply.writableEnded || reply.destroyed) return undefined;
    let room = this.#rooms.get(roomName);
    if (!room) {
      room = { name: roomName, waiters: new Set() };
      this.#rooms.set(roomName, room);
    }
    const { clock, pollTimeoutMs, presence } = this.#options;
    const waiter: Waiter<R> = {
      reply,
      room,
      cursor,
      client,
      address,
      deadline: clock.now() + pollTimeoutMs,
      online: presence.count(roomName),
      people,
    };
    if (!this.#shares.admit(waiter)) {
      if (room.waiters.size === 0) this.#rooms.delete(roomName);
      return 'client_limit';
    }
    (reply as Tracked<R>)[WAITER] = waiter;
    room.waiters.add(waiter);
    this.#queue.add(waiter);
    this.#addresses.add(address);
    // `on`, not `once`: `#remove` takes the listener off on every exit anyway,
    // and `once` would allocate a wrapper and its state per waiting poll.
    reply.on('close', this.#onClose);
    return undefined;
  }

  /**
   * The path for every answer a room's waiters get without a message
   * (wakes.ts): without `typing`, a presence wake; with it, a typing wake.
   */
  wake(roomName: string, typing?: TypingWake): void {
    const room = this.#rooms.get(roomName);
    if (!room) return;
    if (typing === undefined) this.#wake(room);
    else this.#answerChosen(room, typingWake(room.name, typing, this.#options.answers), 'typing');
  }

  /**
   * Wakes every room, so a join or a leave shows within `presenceNotifyMs`
   * (plus the shared count's cache, with several processes). Runs on a timer.
   */
  notifyPresence(): void {
    // Deleting the current room while iterating a Map is safe.
    for (const room of this.#rooms.values()) this.#wake(room);
  }

  /**
   * The timer's notice. A view shared by several processes first fetches
   * the counts of the rooms that have waiting polls, so another process's
   * join or leave shows at this notice, not the next one
   * `presenceNotifyMs` later (the cached count may be up to a cache period
   * old). The wait is bounded: a shared view that does not answer within
   * `REFRESH_WAIT_MS` (or `presenceNotifyMs`, if shorter) is read as it is.
   */
  #notice(): void {
    const { clock, presence } = this.#options;
    if (!presence.refresh || this.#rooms.size === 0) {
      this.notifyPresence();
      return;
    }
    if (this.#refreshing) return;
    this.#refreshing = true;
    let timer: Timer | undefined;
    const notify = () => {
      if (!this.#refreshing) return;
      this.#refreshing = false;
      clock.clearTimeout(timer);
      if (!this.#closed) this.notifyPresence();
    };
    timer = clock.setTimeout(notify, Math.min(REFRESH_WAIT_MS, this.#options.presenceNotifyMs));
    timer.unref?.();
    void presence.refresh([...this.#rooms.keys()]).then(notify);
  }

  #wake(room: WaitingRoom<R>): void {
    const { presence, answers } = this.#options;
    const choice = presenceWake(room.name, room.waiters.size, presence, answers);
    if (choice) this.#answerChosen(room, choice, 'presence');
  }

  /** Answers the waiters of `room` that `choose` gives a body. */
  #answerChosen(room: WaitingRoom<R>, choose: WakeChoice, outcome: Outcome): void {
    for (const waiter of room.waiters) {
      const body = choose(waiter);
      if (body !== undefined) this.#answer(waiter, body, outcome);
    }
  }

  /** Answers every waiter with an empty list, so clients reconnect elsewhere at once. */
  shutdown(): void {
    this.#closed = true;
    this.#queue.stop();
    this.#options.clock.clearInterval(this.#presenceTimer);
    const empties: EmptyBodies = new Map();
    for (const waiter of [...this.#queue.values()]) {
      this.#answer(waiter, this.#empty(waiter, empties), 'shutdown');
    }
  }

  /** The room was reset: the polls waiting past its head are told so, and reload. */
  #onReset(roomName: string, head: number): void {
    const room = this.#rooms.get(roomName);
    if (!room) return;
    const list = this.#options.answers.people(roomName);
    const bodies = [false, true].map((listed) =>
      this.#options.answers.body(roomName, [], head, {
        reset: true,
        people: listed ? list : undefined,
      }),
    );
    for (const waiter of room.waiters) {
      if (waiter.cursor === undefined || waiter.cursor <= head) continue;
      this.#answer(waiter, bodies[listFor(list, waiter.people) ? 1 : 0]!, 'reset');
    }
  }

  /** The message log advanced in `roomName`: answer the waiters its new messages concern. */
  #deliver(roomName: string, ring: readonly Message[], from: number): void {
    const room = this.#rooms.get(roomName);
    if (!room || ring.length === 0) return;
    const first = ring[0]!.id;
    const last = ring[ring.length - 1]!.id;
    // One list per delivery, and per cursor one body without it and one with it.
    const list = this.#options.answers.people(roomName);
    const bodies: [Map<number, Body>, Map<number, Body>] = [new Map(), new Map()];
    const behind = new Map<number, Waiter<R>[]>();
    // Deleting the current entry while iterating a Set is safe: no copy of 10,000 waiters.
    for (const waiter of room.waiters) {
      // The 2011 client asked for "the next message": the ones that just came.
      const cursor = waiter.cursor ?? ring[from]!.id - 1;
      if (cursor >= last) continue; // The client is ahead of this process: nothing for it yet.
      if (cursor < first - 1) {
        this.#remove(waiter);
        const group = behind.get(cursor);
        if (group) group.push(waiter);
        else behind.set(cursor, [waiter]);
        continue;
      }
      const people = listFor(list, waiter.people);
      const shared = bodies[people ? 1 : 0];
      let body = shared.get(cursor);
      if (!body) {
        const start = cursor - first + 1;
        const page = ring.slice(start, start + PAGE_SIZE);
        body = this.#options.answers.body(roomName, page, page[page.length - 1]!.id, { people });
        shared.set(cursor, body);
      }
      this.#answer(waiter, body, 'message');
    }
    for (const [cursor, waiters] of behind) void this.#answerFromStore(roomName, cursor, waiters);
  }

  /**
   * Waiters behind the ring (rare: long-absent clients) need a store read:
   * one read, and one answer, per cursor, however many wait with it. A read
   * that fails answers them empty: they poll again.
   */
  async #answerFromStore(room: string, cursor: number, waiters: Waiter<R>[]): Promise<void> {
    const messages = await this.#options.reads.after(room, cursor, PAGE_SIZE);
    const last = messages?.[messages.length - 1];
    const list = this.#options.answers.people(room);
    const outcome = messages ? 'message' : 'timeout';
    const bodies = new Map<boolean, Body>();
    for (const waiter of waiters) {
      const people = listFor(list, waiter.people);
      let body = bodies.get(people !== undefined);
      if (!body) {
        body = this.#options.answers.body(room, messages ?? [], last ? last.id : cursor, {
          people,
        });
        bodies.set(people !== undefined, body);
      }
      this.#write(waiter, body, outcome);
    }
  }

  #answer(waiter: Waiter<R>, body: Body, outcome: Outcome): void {
    this.#remove(waiter);
    this.#write(waiter, body, outcome);
  }

  #write(waiter: Waiter<R>, body: Body, outcome: Outcome): void {
    if (!this.#options.replies.send(waiter.reply, body, outcome === 'shutdown')) return;
    if (body.count > 0) this.#options.events.delivered(body.count);
    this.#ended(waiter, outcome);
  }

  #ended(waiter: Waiter<R>, outcome: Outcome): void {
    const { clock, pollTimeoutMs, events } = this.#options;
    const ms = clock.now() - (waiter.deadline - pollTimeoutMs);
    events.ended(waiter.reply, waiter.room.name, outcome, ms);
  }

  #empty(waiter: Waiter<R>, batch: EmptyBodies): Body {
    return this.#options.answers.empty(waiter.room.name, waiter.cursor, waiter.people, batch);
  }

  /** The one exit of every waiter: nothing is left behind. */
  #remove(waiter: Waiter<R>): void {
    const room = waiter.room;
    room.waiters.delete(waiter);
    if (room.waiters.size === 0) this.#rooms.delete(room.name);
    this.#queue.delete(waiter);
    this.#addresses.remove(waiter, this.#queue.size);
    this.#shares.remove(waiter);
    waiter.reply.removeListener('close', this.#onClose);
    // Not `delete`: it would turn every answered reply into a slow dictionary-mode object.
    (waiter.reply as Tracked<R>)[WAITER] = undefined;
  }

  /** The queue's head is due: answer, empty, every waiter whose deadline passed. */
  #onDue(now: number): void {
    const empties: EmptyBodies = new Map();
    for (const waiter of this.#queue.values()) {
      if (waiter.deadline > now) break;
      this.#answer(waiter, this.#empty(waiter, empties), 'timeout');
    }
  }
}

/** Rooms with more waiters than this are not searched for a client's other polls. */
const SAME_CLIENT_SEARCH_MAX = 1_000;

/**
 * Whether another waiting poll of `room` has `client`: the tabs of one
 * browser polling on their own (no BroadcastChannel), or the tab taking
 * over the browser's poll before the old one closed. A large room is not
 * searched: its client simply leaves, and counts again at its next poll.
 */
function stillPolls<R>(room: WaitingRoom<R>, client: string): boolean {
  if (room.waiters.size > SAME_CLIENT_SEARCH_MAX) return false;
  for (const waiter of room.waiters) if (waiter.client === client) return true;
  return false;
}
