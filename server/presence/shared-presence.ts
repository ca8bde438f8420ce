/**
 * Presence shared by several processes (cluster workers, or servers on
 * several machines), behind the same synchronous `Presence` interface.
 *
 * `count()` is read for every `/recv` answer, so it must not wait on the
 * network. Each process therefore:
 * - keeps its own clients in a `LocalPresence` (exact, at once);
 * - batches touches and leaves for a few milliseconds and sends them to the
 *   shared view in one round trip (`sync`), which answers with the counts of
 *   the rooms asked for;
 * - caches each room's shared count for `cacheMs` (~1 s): `count()` answers
 *   from the cache and asks for a fresh count when it is older than that.
 *
 * `count()` is the larger of the local and the cached shared count, so a
 * client is counted in its very first answer. `refresh()` lets a reader
 * that is about to act on the counts (the hub's presence notice) wait for
 * a fresh copy first, rather than act on one up to `cacheMs` old and see
 * another process's join or leave only at its next notice. If the shared
 * view cannot be reached (Redis down), a cache older than `staleMs` is
 * dropped and the count falls back to this process's own clients until it
 * is back.
 */

import type { People } from '../../protocol/protocol.ts';
import type { PresenceBatch } from '../bus/cluster-ipc.ts';
import type { Log } from '../core/log.ts';
import { type Clock, systemClock, type Timer } from '../hub/clock.ts';
import { peopleOf } from './people.ts';
import { LocalPresence, type Presence } from './presence.ts';

export type { PresenceBatch };

/** A room in the shared view: its count, and its first nicknames in list order (people.ts). */
export interface SharedRoom {
  count: number;
  names: string[];
}

/** Applies a batch to the shared view; resolves with each room of `batch.rooms`. */
export type PresenceSync = (batch: PresenceBatch) => Promise<Map<string, SharedRoom>>;

export interface SharedPresenceOptions {
  /** Poll timeout plus grace: how long a client counts after its last poll. */
  windowMs: number;
  /** How long a shared count is used before it is asked again. @default 1000 */
  cacheMs?: number;
  /** How long touches are collected before one sync carries them. @default 20 */
  batchMs?: number;
  /**
   * Past this age a cached count is not used while the shared view cannot be
   * reached. While it can, a cached count is used for a whole window (a poll
   * can wait that long between two answers in a quiet room, and the count it
   * gets must still include the other processes' clients); it is refreshed
   * whenever it is read and older than `cacheMs`. @default 10 × cacheMs, at least 10 s
   */
  staleMs?: number;
  log?: Log;
  /** Name in log lines. */
  name?: string;
  /** Releases what `sync` holds (a listener), on `close()`. */
  release?: () => void;
  /** The time the cache ages by and the batch timer: the process's, or a test's (server/hub/clock.ts). */
  clock?: Clock;
}

interface CachedCount {
  value: number;
  names: string[];
  at: number;
}

export class SharedPresence implements Presence {
  readonly #local: LocalPresence;
  readonly #sync: PresenceSync;
  readonly #cacheMs: number;
  readonly #batchMs: number;
  readonly #staleMs: number;
  readonly #windowMs: number;
  readonly #log: Log;
  readonly #name: string;
  readonly #release: () => void;
  readonly #clock: Clock;
  /** `room\0client` → [room, client, nickname?]: a client touched twice in one batch is sent once. */
  #touches = new Map<string, PresenceBatch['touches'][number]>();
  #leaves = new Map<string, [string, string]>();
  #wanted = new Set<string>();
  readonly #counts = new Map<string, CachedCount>();
  /** The last list built per room, kept while what it was built from stays the same. */
  readonly #lists = new Map<string, { from: string[]; online: number; people: People }>();
  /** `refresh()` callers, resolved when the next sync to start has ended. */
  #refreshed: Array<() => void> = [];
  #timer: Timer | undefined;
  #syncing = false;
  #failing = false;
  #closed = false;

  constructor(sync: PresenceSync, options: SharedPresenceOptions) {
    this.#sync = sync;
    const clock = options.clock ?? systemClock;
    this.#clock = clock;
    this.#local = new LocalPresence(options.windowMs, () => clock.now());
    this.#cacheMs = options.cacheMs ?? 1_000;
    this.#batchMs = options.batchMs ?? 20;
    this.#staleMs = options.staleMs ?? Math.max(10 * this.#cacheMs, 10_000);
    this.#windowMs = Math.max(options.windowMs, this.#staleMs);
    this.#log = options.log ?? (() => {});
    this.#name = options.name ?? 'presence';
    this.#release = options.release ?? (() => {});
  }

  touch(room: string, client: string, nickname?: string, addressOf?: () => string): boolean {
    const fresh = this.#local.touch(room, client, nickname, addressOf);
    const key = `${room}\0${client}`;
    this.#leaves.delete(key);
    this.#touches.set(key, nickname === undefined ? [room, client] : [room, client, nickname]);
    this.#schedule();
    return fresh;
  }

  leave(room: string, client: string): void {
    this.#local.leave(room, client);
    const key = `${room}\0${client}`;
    this.#touches.delete(key);
    this.#leaves.set(key, [room, client]);
    this.#schedule();
  }

  count(room: string): number {
    const local = this.#local.count(room);
    const cached = this.#counts.get(room);
    const age = cached ? this.#clock.now() - cached.at : Number.POSITIVE_INFINITY;
    if (age >= this.#cacheMs) {
      this.#wanted.add(room);
      this.#schedule();
    }
    const usableFor = this.#failing ? this.#staleMs : this.#windowMs;
    return cached && age < usableFor ? Math.max(local, cached.value) : local;
  }

  /**
   * The shared view's list while its count is used, else this process's
   * own: the same rules as `count`, so the list and the count agree.
   */
  people(room: string): People {
    const online = this.count(room);
    const cached = this.#counts.get(room);
    const usableFor = this.#failing ? this.#staleMs : this.#windowMs;
    if (!cached || this.#clock.now() - cached.at >= usableFor) return this.#local.people(room);
    const built = this.#lists.get(room);
    if (built && built.from === cached.names && built.online === online) return built.people;
    const people = peopleOf(cached.names, online);
    this.#lists.set(room, { from: cached.names, online, people });
    return people;
  }

  onRename(listener: (room: string) => void): void {
    this.#local.onRename(listener);
  }

  refresh(rooms: readonly string[], fresh = false): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const now = this.#clock.now();
    let stale = false;
    for (const room of rooms) {
      const cached = this.#counts.get(room);
      if (!fresh && cached && now - cached.at < this.#cacheMs) continue;
      this.#wanted.add(room);
      stale = true;
    }
    if (!stale) return Promise.resolve();
    this.#schedule();
    return new Promise((resolve) => this.#refreshed.push(resolve));
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const resolve of this.#refreshed.splice(0)) resolve();
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#release();
    await this.#local.close();
  }

  #schedule(): void {
    if (this.#closed || this.#timer !== undefined || this.#syncing) return;
    // While the shared view is unreachable, try once per cache period, not per batch.
    const delay = this.#failing ? this.#cacheMs : this.#batchMs;
    this.#timer = this.#clock.setTimeout(() => void this.#flush(), delay);
    this.#timer.unref();
  }

  async #flush(): Promise<void> {
    this.#timer = undefined;
    if (this.#closed) return;
    // Asked for before this sync: it carries their rooms.
    const refreshed = this.#refreshed;
    this.#refreshed = [];
    try {
      await this.#sendBatch();
    } finally {
      for (const resolve of refreshed) resolve();
    }
  }

  async #sendBatch(): Promise<void> {
    const touches = [...this.#touches.values()];
    const leaves = [...this.#leaves.values()];
    const rooms = new Set(this.#wanted);
    for (const [room] of touches) rooms.add(room);
    for (const [room] of leaves) rooms.add(room);
    this.#touches = new Map();
    this.#leaves = new Map();
    this.#wanted = new Set();
    if (rooms.size === 0) return;

    this.#syncing = true;
    try {
      const addresses = touches.map(
        ([room, client]) => this.#local.addressIn(room, client) ?? null,
      );
      const batch: PresenceBatch = { touches, leaves, rooms: [...rooms] };
      if (addresses.some((address) => address !== null)) batch.addresses = addresses;
      const counts = await this.#sync(batch);
      const at = this.#clock.now();
      for (const [room, { count, names }] of counts) {
        this.#counts.set(room, { value: count, names, at });
      }
      if (this.#failing) this.#log('info', `${this.#name}: shared counts are back`);
      this.#failing = false;
    } catch (error) {
      // Touches of this batch are lost to the shared view; the clients' next
      // polls touch again well within the window.
      if (!this.#failing) {
        this.#log(
          'warn',
          `${this.#name}: cannot reach the shared view; counting local clients`,
          error,
        );
      }
      this.#failing = true;
    } finally {
      this.#syncing = false;
      this.#forgetStale();
      if (this.#touches.size + this.#leaves.size + this.#wanted.size > 0) this.#schedule();
    }
  }

  #forgetStale(): void {
    const oldest = this.#clock.now() - (this.#failing ? this.#staleMs : this.#windowMs);
    for (const [room, cached] of this.#counts) {
      if (cached.at >= oldest) continue;
      this.#counts.delete(room);
      this.#lists.delete(room);
    }
  }
}
