/**
 * The store watch: how a process learns of messages that no bus told it
 * about (docs/design.md, "Rules that make delivery correct", rule 2).
 *
 * Several processes may write to one database with no bus between them (two
 * `npm start` on one SQLite file, IIS starting several processes, a bus that
 * is down). Each process's message log then misses the others' messages, and
 * a poll waiting at the head would wait out its timeout for a message that
 * is already stored. So, every `intervalMs` (about 1 s) while the bus is not
 * live, the watch asks the store for the head of each room where polls wait,
 * and reads what the log lacks; the log then answers those polls. One more
 * look follows the bus's return, for what was published while it was away.
 * A reliable bus (the cluster's IPC, `Bus.reliable`) is looked past always:
 * it loses only the message of a worker that died before it published it.
 *
 * Cost: nothing while Redis is live; otherwise one cheap query a second
 * when polls wait (SQLite skips it unless another connection committed).
 */
import type { Log } from '../core/log.ts';
import { type Clock, systemClock, type Timer } from './clock.ts';
import { type MessageLog, PAGE_SIZE } from './message-log.ts';
import type { StoreReads } from './store-reads.ts';

export interface StoreWatchOptions {
  reads: StoreReads;
  messages: MessageLog;
  /** Whether the bus now carries every other process's messages here: no look is needed. */
  busLive: () => boolean;
  /** Rooms where polls wait, each with the smallest cursor waiting there. */
  watched: () => Iterable<{ room: string; floor: number | undefined }>;
  /** How often to look while the bus is not live. */
  intervalMs: number;
  log?: Log;
  clock?: Clock;
}

/** Rooms asked about in one look, at most (one `IN (…)` list). */
const ROOMS_PER_LOOK = 1_000;

export class StoreWatch {
  readonly #options: StoreWatchOptions;
  readonly #clock: Clock;
  readonly #timer: Timer;
  #busWasLive: boolean;
  #looking = false;
  #failing = false;

  constructor(options: StoreWatchOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#busWasLive = options.busLive();
    this.#timer = this.#clock.setInterval(() => void this.#tick(), options.intervalMs);
    this.#timer.unref();
  }

  /** One look, if the bus is not live (or just came back). Runs on the timer. */
  async #tick(): Promise<void> {
    const live = this.#options.busLive();
    const comeBack = live && !this.#busWasLive;
    this.#busWasLive = live;
    if ((live && !comeBack) || this.#looking) return;
    this.#looking = true;
    try {
      await this.#look(comeBack || (await this.#options.reads.othersWrote()));
    } finally {
      this.#looking = false;
    }
  }

  close(): void {
    this.#clock.clearInterval(this.#timer);
  }

  async #look(othersMayHaveWritten: boolean): Promise<void> {
    if (!othersMayHaveWritten) return;
    const { reads, messages } = this.#options;
    // Every room the log knows, not only those with waiters: a poll that comes
    // later trusts the log's ring, so the ring must not lag behind the store.
    const floors = new Map<string, number | undefined>();
    for (const { room, floor } of this.#options.watched()) floors.set(room, floor);
    for (const room of messages.roomNames()) if (!floors.has(room)) floors.set(room, undefined);
    const rooms = [...floors.keys()];
    // A failed read is logged once per outage here; the next tick looks again.
    for (let start = 0; start < rooms.length; start += ROOMS_PER_LOOK) {
      const chunk = rooms.slice(start, start + ROOMS_PER_LOOK);
      // What the log knew as the read was asked: every id in it was stored
      // by then, so a read that shows less proves a reset. An id the log
      // took in while the read ran may be past what the read saw, and
      // proves nothing.
      const knewBefore = chunk.map((room) => messages.lastId(room));
      const heads = await reads.heads(chunk);
      if (!heads) return this.#failed();
      for (const [i, room] of chunk.entries()) {
        const head = heads.get(room) ?? 0;
        const knew = knewBefore[i];
        if (knew !== undefined && head < knew) {
          // The store has fewer messages than the log: the room was reset
          // (a new database, messages deleted). What the log knew is void.
          messages.reset(room, head);
          continue;
        }
        const known = messages.lastId(room) ?? floors.get(room);
        if (known === undefined || head <= known) continue;
        const found = await reads.after(room, known, PAGE_SIZE);
        if (!found) return this.#failed();
        messages.seed(room, found);
      }
    }
    if (this.#failing) this.#options.log?.('info', 'store watch: the store answers again');
    this.#failing = false;
  }

  #failed(): void {
    if (!this.#failing) this.#options.log?.('warn', 'store watch: cannot read the store; retrying');
    this.#failing = true;
  }
}
