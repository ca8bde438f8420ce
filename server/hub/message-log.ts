/**
 * The message log of one process: what this process knows of each room's
 * latest messages, and the ordering rule that keeps every cursor honest.
 * Part of the hub (docs/design.md, "The hub"): the waiting polls
 * (`waiters.ts`) subscribe to it with `onAdvance` and answer themselves.
 *
 * Per room it keeps a ring: a run of consecutive ids, oldest first, at most
 * `ringSize` long (docs/design.md, "Cursors and dense ids"). The rules:
 * - No skips, no doubles. A message that is the next id extends the ring. A
 *   message ahead of a gap (id 7 while the ring ends at 5: id 6 is still in
 *   flight on another process, or the bus lost it) is held back until the gap
 *   fills, from the bus or, after `gapWaitMs`, from the store. A message the
 *   ring already has (a bus echo, a repeated key) is dropped.
 * - A gap the store does not fill either is given up only once it cannot fill
 *   any more: at once for a store whose commits come in id order (SQLite,
 *   MySQL: the id was taken by a write that failed), after the store's
 *   `gapGraceMs` for one that can show a larger id first (MongoDB).
 * - Bounded memory. At most `maxRooms` rooms are kept, least recently used
 *   first out, and a room nobody watches (`isWatched`) that saw no message for
 *   `roomIdleMs` is dropped. Dropping a room costs a store read later, never
 *   a message: a room the log does not know sends every catch-up to the store.
 * - Deliver in batches. Messages accepted in one turn of the event loop reach
 *   the listeners together, once per room (`onAdvance`).
 */
import { limits } from '../../protocol/protocol.ts';
import type { Log } from '../core/log.ts';
import type { Message } from '../store/store.ts';
import { type Clock, systemClock, type Timer } from './clock.ts';
import type { StoreReads } from './store-reads.ts';

/** Messages in one answer, at most (the contract's catch-up page). */
export const PAGE_SIZE = limits.pageSize;

export interface MessageLogOptions {
  /** Where a gap the bus did not fill is read from (`store-reads.ts`). */
  reads: StoreReads;
  /**
   * Whether "nothing after your cursor" can be answered from memory. True
   * when every message reaches this process through this log in time (one
   * process, or a process that the store watch keeps up to date); false when
   * a bus that may drop messages is the only way in: the store is asked.
   */
  trustRing: boolean;
  /** Rooms kept in memory, at most; least recently used go first. */
  maxRooms: number;
  /** A room nobody watches that saw no message for this long is dropped. */
  roomIdleMs: number;
  /** Whether waiting polls watch the room (a watched room is not dropped for idleness). */
  isWatched?: (room: string) => boolean;
  /**
   * A room's listeners are told at most this often, in milliseconds: what
   * comes sooner after the last telling waits for the rest of it. @default 0
   */
  batchMs?: number;
  /** Messages kept per room for catch-ups without a store read. @default 256 */
  ringSize?: number;
  /** How long a message waits for a smaller id before the gap is read from the store. @default 200 */
  gapWaitMs?: number;
  log?: Log;
  clock?: Clock;
}

/**
 * Called once per room and turn with the room's ring and the index of its
 * first new message. The ring is the log's own array: read it, don't keep it.
 */
export type AdvanceListener = (room: string, ring: readonly Message[], from: number) => void;

/** Called when a room turned out to be reset: its messages now end at `head` (0: none). */
export type ResetListener = (room: string, head: number) => void;

interface Room {
  name: string;
  /** Consecutive ids, oldest first. */
  ring: Message[];
  /** The id just before the ring's first when the ring is empty: what the log knows of the head. */
  base: number | undefined;
  /** Messages that arrived ahead of a gap, by id. */
  ahead: Map<number, Message>;
  /** When the oldest message in `ahead` arrived. */
  aheadSince: number;
  gapTimer: Timer | undefined;
  /** Ring index of the first message not yet handed to the listeners. */
  dirtyFrom: number | undefined;
  /** When the listeners were last told of the room's messages. */
  toldAt: number;
  /** Set while the room's new messages wait for `batchMs` after `toldAt`. */
  batchTimer: Timer | undefined;
  /** When the listeners were last told (not reset when a batch falls due, unlike `toldAt`). */
  deliveredAt: number;
  /** The time between the last two tellings (Infinity: fewer than two). */
  deliveryGap: number;
  /** Last time a message came in or a catch-up looked (for idle expiry). */
  usedAt: number;
}

export class MessageLog {
  /** In least recently used order: a room is moved to the end on every use. */
  readonly #rooms = new Map<string, Room>();
  readonly #dirty = new Set<Room>();
  readonly #listeners: AdvanceListener[] = [];
  readonly #resetListeners: ResetListener[] = [];
  readonly #reads: StoreReads;
  readonly #ringSize: number;
  readonly #gapWaitMs: number;
  readonly #batchMs: number;
  readonly #gapGraceMs: number;
  readonly #maxRooms: number;
  readonly #roomIdleMs: number;
  readonly #isWatched: (room: string) => boolean;
  readonly #log: Log | undefined;
  readonly #clock: Clock;
  readonly #sweep: Timer;
  #trustRing: boolean;
  /** The room at the most recently used end of `#rooms`. */
  #newest: Room | undefined;
  #flushScheduled = false;
  #closed = false;

  constructor(options: MessageLogOptions) {
    this.#reads = options.reads;
    this.#trustRing = options.trustRing;
    this.#ringSize = options.ringSize ?? 256;
    this.#gapWaitMs = options.gapWaitMs ?? 200;
    this.#batchMs = options.batchMs ?? 0;
    this.#gapGraceMs = options.reads.gapGraceMs;
    this.#maxRooms = options.maxRooms;
    this.#roomIdleMs = options.roomIdleMs;
    this.#isWatched = options.isWatched ?? (() => false);
    this.#log = options.log;
    this.#clock = options.clock ?? systemClock;
    this.#sweep = this.#clock.setInterval(
      () => this.dropIdle(),
      Math.max(1_000, this.#roomIdleMs / 2),
    );
    this.#sweep.unref();
  }

  /** Rooms held in memory. */
  get rooms(): number {
    return this.#rooms.size;
  }

  onAdvance(listener: AdvanceListener): void {
    this.#listeners.push(listener);
  }

  onReset(listener: ResetListener): void {
    this.#resetListeners.push(listener);
  }

  /**
   * The messages after `since` that the log can vouch for, or undefined when
   * the store must be asked (the room is unknown, the ring starts later, or
   * "nothing yet" cannot be trusted).
   */
  catchUp(roomName: string, since: number): Message[] | undefined {
    const room = this.#rooms.get(roomName);
    if (!room) return undefined;
    const last = lastOf(room);
    if (last === undefined) return undefined;
    this.#use(room);
    if (since >= last) return this.#trustRing && since === last ? [] : undefined;
    const first = last - room.ring.length + 1;
    if (since < first - 1) return undefined;
    const start = since - first + 1;
    return room.ring.slice(start, start + PAGE_SIZE);
  }

  /**
   * Whether the room is quiet: its polls were last told of new messages
   * `ms` ago or more, or the time between its last two tellings was that
   * long (a poll that comes right after a message, in a room with a message
   * a minute, is about to wait a minute). A room this log does not know is.
   */
  quiet(roomName: string, ms: number): boolean {
    const room = this.#rooms.get(roomName);
    if (!room) return true;
    return this.#clock.now() - room.deliveredAt >= ms || room.deliveryGap >= ms;
  }

  /** Whether the room's latest messages wait for their batch (`batchMs`): they are not told yet. */
  batching(roomName: string): boolean {
    return this.#rooms.get(roomName)?.batchTimer !== undefined;
  }

  /** The latest id this process knows in the room, if it knows one. */
  lastId(roomName: string): number | undefined {
    const room = this.#rooms.get(roomName);
    return room ? lastOf(room) : undefined;
  }

  /**
   * A stored message, from this process or another. Extends the ring when it
   * is the next id, holds it back when it is ahead of a gap, drops it when it
   * is already known.
   */
  accept(message: Message): void {
    if (this.#closed) return;
    const room = this.#room(message.room);
    const last = lastOf(room);
    if (last === undefined || message.id === last + 1) {
      this.#append(room, message);
      this.#drainAhead(room);
    } else if (message.id > last + 1 && !room.ahead.has(message.id)) {
      if (room.ahead.size === 0) room.aheadSince = this.#clock.now();
      room.ahead.set(message.id, message);
      room.gapTimer ??= this.#clock.setTimeout(() => void this.#fillGap(room), this.#gapWaitMs);
    }
    // message.id <= last: known already.
  }

  /**
   * What a store read showed: the messages after `since`, fewer than a page,
   * so they reach the room's head. A room the log did not know starts its
   * ring there; a known one takes in what the bus has not brought yet (and
   * the waiting polls behind it are answered now, since the bus copy will be
   * dropped as known).
   */
  seed(roomName: string, messages: readonly Message[]): void {
    if (this.#closed || messages.length === 0) return;
    const room = this.#room(roomName);
    if (lastOf(room) === undefined) {
      // Start at the run of consecutive ids at the end: a store may have a hole
      // that never fills (a write that failed after taking its id).
      let start = messages.length - 1;
      while (start > 0 && messages[start - 1]!.id === messages[start]!.id - 1) start -= 1;
      start = Math.max(start, messages.length - this.#ringSize);
      room.base = messages[start]!.id - 1;
      for (const message of messages.slice(start)) this.accept(message);
      return;
    }
    for (const message of messages) this.accept(message);
  }

  /**
   * The room's head as the store reported it, when the log knows nothing of
   * the room: later messages then extend from it, and "nothing after the
   * head" can be answered from memory.
   */
  noteHead(roomName: string, head: number): void {
    if (this.#closed) return;
    const room = this.#room(roomName);
    if (lastOf(room) === undefined) room.base = head;
  }

  /** The names of the rooms held, as a copy (a look-up reorders them). */
  roomNames(): string[] {
    return [...this.#rooms.keys()];
  }

  /**
   * The store's head of a room is behind what the log knew (a new database,
   * messages deleted): what the log knew is void. Forgets the room, and tells
   * the listeners so that polls waiting past `head` are told to reset.
   */
  reset(roomName: string, head: number): void {
    const room = this.#rooms.get(roomName);
    if (room) this.#drop(room);
    for (const listener of this.#resetListeners) listener(roomName, head);
  }

  /** Drops the rooms nobody watches that saw nothing for `roomIdleMs`. Runs on a timer. */
  dropIdle(): void {
    const oldest = this.#clock.now() - this.#roomIdleMs;
    for (const room of this.#rooms.values()) {
      if (room.usedAt > oldest) break; // LRU order: the rest are fresher.
      if (!this.#isWatched(room.name) && room.ahead.size === 0) this.#drop(room);
    }
  }

  close(): void {
    this.#closed = true;
    this.#clock.clearInterval(this.#sweep);
    for (const room of this.#rooms.values()) {
      this.#clock.clearTimeout(room.gapTimer);
      this.#clock.clearTimeout(room.batchTimer);
    }
    this.#rooms.clear();
    this.#newest = undefined;
  }

  #room(name: string): Room {
    let room = this.#rooms.get(name);
    if (room) {
      this.#use(room);
      return room;
    }
    room = {
      name,
      ring: [],
      base: undefined,
      ahead: new Map(),
      aheadSince: 0,
      gapTimer: undefined,
      dirtyFrom: undefined,
      toldAt: Number.NEGATIVE_INFINITY,
      batchTimer: undefined,
      deliveredAt: Number.NEGATIVE_INFINITY,
      deliveryGap: Number.POSITIVE_INFINITY,
      usedAt: this.#clock.now(),
    };
    this.#rooms.set(name, room);
    this.#newest = room;
    if (this.#rooms.size > this.#maxRooms) this.#evictOne();
    return room;
  }

  /**
   * Marks a room used now and moves it to the most recently used end (at
   * once when it is there already: the busy room). Both here, so the map's
   * order stays the order of `usedAt`, which `dropIdle` stops early on.
   */
  #use(room: Room): void {
    room.usedAt = this.#clock.now();
    if (this.#newest === room) return;
    this.#rooms.delete(room.name);
    this.#rooms.set(room.name, room);
    this.#newest = room;
  }

  /**
   * Over `maxRooms`: drop the least recently used room, preferring one nobody
   * watches. A watched room can go too when every room is watched: its polls
   * then catch up from the store, which costs a read, not a message.
   */
  #evictOne(): void {
    let checked = 0;
    for (const room of this.#rooms.values()) {
      if (checked++ >= 64) break;
      if (!this.#isWatched(room.name)) {
        this.#drop(room);
        return;
      }
    }
    const first = this.#rooms.values().next().value;
    if (first) this.#drop(first);
  }

  #drop(room: Room): void {
    if (this.#newest === room) this.#newest = undefined;
    this.#clock.clearTimeout(room.gapTimer);
    room.gapTimer = undefined;
    this.#clock.clearTimeout(room.batchTimer);
    room.batchTimer = undefined;
    this.#rooms.delete(room.name);
    this.#dirty.delete(room);
  }

  #append(room: Room, message: Message): void {
    room.ring.push(message);
    const overflow = room.ring.length - this.#ringSize;
    if (overflow > 0) {
      room.ring.splice(0, overflow);
      if (room.dirtyFrom !== undefined) room.dirtyFrom = Math.max(0, room.dirtyFrom - overflow);
    }
    room.dirtyFrom ??= room.ring.length - 1;
    this.#scheduleFlush(room);
  }

  #drainAhead(room: Room): void {
    let next = lastOf(room)! + 1;
    for (let message = room.ahead.get(next); message; message = room.ahead.get(next)) {
      room.ahead.delete(next);
      this.#append(room, message);
      next += 1;
    }
    for (const id of room.ahead.keys()) if (id < next) room.ahead.delete(id);
    if (room.ahead.size === 0 && room.gapTimer) {
      this.#clock.clearTimeout(room.gapTimer);
      room.gapTimer = undefined;
    }
  }

  /** The gap did not fill from the bus: read it from the store. */
  async #fillGap(room: Room): Promise<void> {
    room.gapTimer = undefined;
    if (this.#closed || room.ahead.size === 0 || this.#rooms.get(room.name) !== room) return;
    const last = lastOf(room)!;
    const missing = await this.#reads.after(room.name, last, PAGE_SIZE);
    if (missing) for (const message of missing) this.accept(message);
    else this.#log?.('warn', `message log: cannot read the gap after ${room.name}#${last}`);
    if (room.ahead.size === 0 || this.#closed || this.#rooms.get(room.name) !== room) return;
    const stillLast = lastOf(room);
    const heldFor = this.#clock.now() - room.aheadSince;
    if (stillLast === last && heldFor >= this.#gapGraceMs) {
      // The store has nothing after `last` either, and can no longer show it:
      // the smaller id will never come (a write that failed after taking it).
      // Restart the ring at the held-back messages; polls behind them are
      // answered from the store.
      const first = Math.min(...room.ahead.keys());
      room.ring = [];
      room.base = first - 1;
      room.dirtyFrom = undefined;
      this.#drainAhead(room);
    } else {
      // Progress, or a store that may still show the id (its grace): look again.
      room.gapTimer ??= this.#clock.setTimeout(() => void this.#fillGap(room), this.#gapWaitMs);
    }
  }

  #scheduleFlush(room: Room): void {
    this.#dirty.add(room);
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    // Deliver after the current turn: several messages that arrive together
    // (a burst of sends, a gap filled from the store) leave in one answer.
    this.#clock.setImmediate(() => this.#flush());
  }

  /** A room's batch is due: its messages go at the next flush, with whatever came meanwhile. */
  #batchDue(room: Room): void {
    room.batchTimer = undefined;
    // Its wait is over whatever the wall clock says now.
    room.toldAt = Number.NEGATIVE_INFINITY;
    if (room.dirtyFrom !== undefined && this.#rooms.get(room.name) === room) {
      this.#scheduleFlush(room);
    }
  }

  #flush(): void {
    this.#flushScheduled = false;
    const now = this.#clock.now();
    for (const room of this.#dirty) {
      const from = room.dirtyFrom;
      if (from === undefined || this.#closed || room.batchTimer !== undefined) continue;
      // Never longer than the batch: a wall clock set back must not hold the room.
      const wait = Math.min(room.toldAt + this.#batchMs - now, this.#batchMs);
      if (wait > 0) {
        room.batchTimer = this.#clock.setTimeout(() => this.#batchDue(room), wait);
        continue;
      }
      room.toldAt = now;
      // A wall clock set back makes it 0: busy, the safe side.
      room.deliveryGap = Math.max(0, now - room.deliveredAt);
      room.deliveredAt = now;
      room.dirtyFrom = undefined;
      for (const listener of this.#listeners) {
        try {
          listener(room.name, room.ring, from);
        } catch (error) {
          this.#log?.('error', `message log: a listener failed for ${room.name}`, error);
        }
      }
    }
    this.#dirty.clear();
  }
}

/** The last id the room's log knows: the ring's last, or its base when the ring is empty. */
function lastOf(room: Room): number | undefined {
  const ring = room.ring;
  return ring.length > 0 ? ring[ring.length - 1]!.id : room.base;
}
