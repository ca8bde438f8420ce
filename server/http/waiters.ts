/**
 * The waiting polls of one process: each `GET /recv` that had nothing to
 * answer yet, held by room with the cursor its client sent, until the
 * message log advances past that cursor, the poll timeout passes, the
 * client goes away, the room's online count changes, or the server shuts
 * down (docs/design.md, "Rules that make delivery correct", rules 3 to 5).
 *
 * - No leaks. A waiter is removed on every exit (`#remove`), and a client
 *   that goes away frees its waiter at once (`close`).
 * - Every waiter ends. All waiters share one timeout, so the order they were
 *   added is the order they expire in: one queue and one timer serve them all.
 * - Serialise once. Waiters of a room that share a cursor get the very same
 *   body; waiters behind the log's ring share one store read per cursor.
 * - Fair share. One client address holds at most `maxPerAddress` waiters,
 *   and the process at most `maxWaiters`. Addresses are read and counted
 *   only while the process holds enough polls for one address to reach its
 *   limit (`#byAddress`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Message } from '../../protocol/protocol.ts';
import type { AddressOf } from '../core/client-address.ts';
import type { Log } from '../core/log.ts';
import { type MessageLog, PAGE_SIZE } from '../messages/message-log.ts';
import type { PollOutcome, Telemetry } from '../metrics/telemetry.ts';
import type { Presence } from '../presence/presence.ts';
import type { MessageStore } from '../store/store.ts';
import { type Body, recvBody, writeBody } from './answer.ts';

export interface WaitersOptions {
  messages: MessageLog;
  store: MessageStore;
  presence: Presence;
  telemetry: Telemetry;
  pollTimeoutMs: number;
  /** Waiting polls this process holds at most. */
  maxWaiters: number;
  /** Waiting polls one client address holds at most; 0: no limit. */
  maxPerAddress: number;
  /** A request's client address (client-address.ts), read only while polls are counted by address. */
  addressOf: AddressOf;
  /** How often the online count of rooms with waiters is checked; 0: never. */
  presenceNotifyMs: number;
  log?: Log;
}

/** Rooms whose catch-up bodies are kept at once; past it the cache starts over. */
const CATCH_UP_ROOMS = 1_000;

/** Rooms with more waiters than this hear of online changes with their next answer only. */
const PRESENCE_NOTIFY_MAX_WAITERS = 1_000;

interface Waiter {
  res: ServerResponse;
  room: WaitingRoom;
  /** The id of the last message the client has; undefined for the 2011 client ("the next message"). */
  cursor: number | undefined;
  client: string | undefined;
  /** The address it is counted under while polls are counted by address (`#byAddress`). */
  address: string | undefined;
  deadline: number;
  /** The online count the client was last shown. */
  online: number;
}

interface WaitingRoom {
  name: string;
  waiters: Set<Waiter>;
}

/** Why `wait` did not take a poll. */
export type Refusal = 'closed' | 'overloaded' | 'address_limit';

const WAITER = Symbol('waiter');
type TrackedResponse = ServerResponse & { [WAITER]?: Waiter };

export class Waiters {
  readonly #rooms = new Map<string, WaitingRoom>();
  /** Every waiter, in deadline order (insertion order of a Set). */
  readonly #queue = new Set<Waiter>();
  /**
   * Waiting polls by client address, while they are counted: from the moment
   * the process holds `maxPerAddress` polls until it holds fewer than half
   * of that. Below `maxPerAddress` polls in all, no address can be at its
   * limit, so none is read: reading one is a system call (getpeername) per
   * connection, which was 6% of the server's CPU in bench T5's fan-out.
   * While the map exists, every waiter is counted in it.
   */
  #byAddress: Map<string, number> | undefined;
  /** Catch-up bodies of each room at its head, by cursor (`catchUpBody`). */
  readonly #catchUps = new Map<
    string,
    { last: number; online: number; bodies: Map<number, Body> }
  >();
  readonly #options: WaitersOptions;
  readonly #presenceTimer: NodeJS.Timeout | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  /**
   * The one `close` listener of every waiting response (no closure per
   * request, and no field per waiter to find this `Waiters`): `close` before
   * the answer means the client went away, and its waiter goes.
   */
  readonly #onClose: (this: TrackedResponse) => void;

  constructor(options: WaitersOptions) {
    this.#options = options;
    const gone = (waiter: Waiter): void => {
      this.#remove(waiter);
      // A browser's tabs share its client id: it leaves only with its last poll here.
      if (waiter.client !== undefined && !stillPolls(waiter.room, waiter.client)) {
        options.presence.leave(waiter.room.name, waiter.client);
      }
      this.#ended(waiter, 'gone', 0);
    };
    this.#onClose = function (this: TrackedResponse): void {
      const waiter = this[WAITER];
      if (waiter) gone(waiter);
    };
    options.messages.onAdvance((room, ring, from) => this.#deliver(room, ring, from));
    options.messages.onReset((room, head) => this.#onReset(room, head));
    if (options.presenceNotifyMs > 0) {
      this.#presenceTimer = setInterval(() => this.notifyPresence(), options.presenceNotifyMs);
      this.#presenceTimer.unref();
    }
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
  refusal(): Exclude<Refusal, 'address_limit'> | undefined {
    if (this.#closed) return 'closed';
    if (this.#queue.size >= this.#options.maxWaiters) return 'overloaded';
    return undefined;
  }

  /**
   * Holds `res` until a message after `cursor` arrives, the poll timeout
   * passes, the client goes away, the online count changes, or shutdown.
   * Returns why it did not, when it refused the poll: the caller answers it.
   */
  wait(
    res: ServerResponse,
    roomName: string,
    cursor: number | undefined,
    client: string | undefined,
  ): Refusal | undefined {
    const refused = this.refusal();
    if (refused !== undefined) return refused;
    const address = this.#addressToCount(res.req);
    const byAddress = this.#byAddress;
    if (address !== undefined && byAddress !== undefined) {
      const held = byAddress.get(address) ?? 0;
      if (held >= this.#options.maxPerAddress) return 'address_limit';
    }
    if (res.closed || res.writableEnded) return undefined;
    let room = this.#rooms.get(roomName);
    if (!room) {
      room = { name: roomName, waiters: new Set() };
      this.#rooms.set(roomName, room);
    }
    const waiter: Waiter = {
      res,
      room,
      cursor,
      client,
      address,
      deadline: Date.now() + this.#options.pollTimeoutMs,
      online: this.#options.presence.count(roomName),
    };
    (res as TrackedResponse)[WAITER] = waiter;
    room.waiters.add(waiter);
    this.#queue.add(waiter);
    if (address !== undefined) byAddress?.set(address, (byAddress.get(address) ?? 0) + 1);
    // `on`, not `once`: `#remove` takes the listener off on every exit anyway,
    // and `once` would allocate a wrapper and its state per waiting poll.
    res.on('close', this.#onClose);
    if (this.#timer === undefined) this.#armTimer();
    return undefined;
  }

  /**
   * The address a new poll from `req` counts under, or undefined while polls
   * are not counted. Counting starts here, when the process holds
   * `maxPerAddress` polls: each waiting poll's address is read then, once.
   */
  #addressToCount(req: IncomingMessage): string | undefined {
    const limit = this.#options.maxPerAddress;
    if (limit === 0) return undefined;
    if (this.#byAddress === undefined) {
      if (this.#queue.size < limit) return undefined;
      const byAddress = new Map<string, number>();
      for (const waiter of this.#queue) {
        waiter.address ??= this.#options.addressOf(waiter.res.req);
        byAddress.set(waiter.address, (byAddress.get(waiter.address) ?? 0) + 1);
      }
      this.#byAddress = byAddress;
    }
    return this.#options.addressOf(req);
  }

  /** The answer for `messages` in `room`, with the room's online count. */
  body(room: string, messages: readonly Message[], cursor: number, reset = false): Body {
    return recvBody(messages, cursor, this.#options.presence.count(room), reset);
  }

  /**
   * The answer to a poll that catches up at once with
   * `messages` (the room's messages after its cursor, up to the head). Polls
   * that send the same cursor while the head and the online count stay put
   * share one body, as waiters do (docs/design.md, rule 5): under sustained
   * delivery most answers are such catch-ups (bench T6: server CPU per
   * delivery 17.6 → 15.5 µs when they stopped being serialised one by one).
   * The cache holds one head per room, so it is as large as the ring at most.
   */
  catchUpBody(room: string, messages: readonly Message[]): Body {
    const last = messages[messages.length - 1]!.id;
    const online = this.#options.presence.count(room);
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
   * Answers the waiters whose client was shown another online count than the
   * room's count now, so a join or a leave shows within `presenceNotifyMs`
   * (plus the shared count's cache, with several processes). Runs on a timer.
   */
  notifyPresence(): void {
    for (const room of this.#rooms.values()) {
      if (room.waiters.size > PRESENCE_NOTIFY_MAX_WAITERS) continue;
      const online = this.#options.presence.count(room.name);
      const empties = new Map<number, Body>();
      for (const waiter of room.waiters) {
        if (waiter.online === online) continue;
        this.#answer(waiter, this.#emptyBody(waiter, empties), 'presence');
      }
    }
  }

  /** Answers every waiter with an empty list, so clients reconnect elsewhere at once. */
  shutdown(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    clearInterval(this.#presenceTimer);
    this.#timer = undefined;
    const empties = new Map<WaitingRoom, Map<number, Body>>();
    for (const waiter of [...this.#queue]) {
      waiter.res.setHeader('Connection', 'close');
      this.#answer(waiter, this.#emptyBody(waiter, cacheFor(empties, waiter.room)), 'shutdown');
    }
  }

  /** The room was reset: the polls waiting past its head are told so, and reload. */
  #onReset(roomName: string, head: number): void {
    this.#catchUps.delete(roomName);
    const room = this.#rooms.get(roomName);
    if (!room) return;
    const body = this.body(roomName, [], head, true);
    for (const waiter of room.waiters) {
      if (waiter.cursor !== undefined && waiter.cursor > head) this.#answer(waiter, body, 'reset');
    }
  }

  /** The message log advanced in `roomName`: answer the waiters its new messages concern. */
  #deliver(roomName: string, ring: readonly Message[], from: number): void {
    const room = this.#rooms.get(roomName);
    if (!room || ring.length === 0) return;
    const first = ring[0]!.id;
    const last = ring[ring.length - 1]!.id;
    const bodies = new Map<number, Body>();
    const behind = new Map<number, Waiter[]>();
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
      let body = bodies.get(cursor);
      if (!body) {
        const start = cursor - first + 1;
        const page = ring.slice(start, start + PAGE_SIZE);
        body = this.body(roomName, page, page[page.length - 1]!.id);
        bodies.set(cursor, body);
      }
      this.#answer(waiter, body, 'message');
    }
    for (const [cursor, waiters] of behind) this.#answerFromStore(roomName, cursor, waiters);
  }

  /**
   * Waiters behind the ring (rare: long-absent clients) need a store read:
   * one read, and one answer, per cursor, however many wait with it.
   */
  #answerFromStore(room: string, cursor: number, waiters: Waiter[]): void {
    this.#options.store.after(room, cursor, PAGE_SIZE).then(
      (messages) => {
        const last = messages[messages.length - 1];
        const body = this.body(room, messages, last ? last.id : cursor);
        for (const waiter of waiters) this.#write(waiter, body, 'message');
      },
      (error: unknown) => {
        this.#options.log?.('warn', 'waiters: store read failed; answering empty', error);
        const body = this.body(room, [], cursor);
        for (const waiter of waiters) this.#write(waiter, body, 'timeout');
      },
    );
  }

  #answer(waiter: Waiter, body: Body, outcome: PollOutcome): void {
    this.#remove(waiter);
    this.#write(waiter, body, outcome);
  }

  #write(waiter: Waiter, body: Body, outcome: PollOutcome): void {
    if (!writeBody(waiter.res, body)) return;
    if (body.count > 0) this.#options.telemetry.delivered(body.count);
    this.#ended(waiter, outcome, 200);
  }

  #ended(waiter: Waiter, outcome: PollOutcome, status: number): void {
    this.#options.telemetry.pollEnded({
      req: waiter.res.req,
      room: waiter.room.name,
      outcome,
      status,
      ms: Date.now() - (waiter.deadline - this.#options.pollTimeoutMs),
    });
  }

  /**
   * The empty answer for a waiter. Waiters answered together mostly share a
   * room and cursor: `cache`, kept for one batch, serialises each empty answer
   * once, not once per waiter.
   */
  #emptyBody(waiter: Waiter, cache: Map<number, Body>): Body {
    const cursor = waiter.cursor ?? this.#options.messages.lastId(waiter.room.name) ?? 0;
    let body = cache.get(cursor);
    if (!body) {
      body = this.body(waiter.room.name, [], cursor);
      cache.set(cursor, body);
    }
    return body;
  }

  /** The one exit of every waiter: nothing is left behind. */
  #remove(waiter: Waiter): void {
    const room = waiter.room;
    room.waiters.delete(waiter);
    if (room.waiters.size === 0) this.#rooms.delete(room.name);
    this.#queue.delete(waiter);
    const byAddress = this.#byAddress;
    if (byAddress !== undefined) {
      if (this.#queue.size < this.#options.maxPerAddress / 2) {
        this.#byAddress = undefined;
      } else {
        // Kept, not read again: behind a proxy, reading it parses
        // X-Forwarded-For, and this runs for every answered poll.
        const address = waiter.address!;
        const held = (byAddress.get(address) ?? 1) - 1;
        if (held > 0) byAddress.set(address, held);
        else byAddress.delete(address);
      }
    }
    waiter.res.removeListener('close', this.#onClose);
    // Not `delete`: it would turn every answered response into a slow dictionary-mode object.
    (waiter.res as TrackedResponse)[WAITER] = undefined;
    if (this.#queue.size === 0) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  #armTimer(): void {
    const head = this.#queue.values().next().value;
    if (!head) return;
    this.#timer = setTimeout(() => this.#onTimer(), Math.max(0, head.deadline - Date.now()));
    this.#timer.unref();
  }

  #onTimer(): void {
    this.#timer = undefined;
    const now = Date.now();
    const empties = new Map<WaitingRoom, Map<number, Body>>();
    for (const waiter of this.#queue) {
      if (waiter.deadline > now) break;
      this.#answer(waiter, this.#emptyBody(waiter, cacheFor(empties, waiter.room)), 'timeout');
    }
    if (this.#queue.size > 0 && this.#timer === undefined) this.#armTimer();
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
function stillPolls(room: WaitingRoom, client: string): boolean {
  if (room.waiters.size > SAME_CLIENT_SEARCH_MAX) return false;
  for (const waiter of room.waiters) if (waiter.client === client) return true;
  return false;
}

function cacheFor(
  caches: Map<WaitingRoom, Map<number, Body>>,
  room: WaitingRoom,
): Map<number, Body> {
  let cache = caches.get(room);
  if (!cache) {
    cache = new Map();
    caches.set(room, cache);
  }
  return cache;
}
