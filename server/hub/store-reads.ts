/**
 * The one place the hub reads the store: the messages after a cursor, and
 * rooms' heads. Every read has the same deadline (`STORE_TIMEOUT_MS`) and the
 * same failure policy: it resolves to `undefined`, never rejects. The
 * store's up/down state hears of each read's outcome from the store wrapper
 * (server/metrics/write-health.ts), which logs an outage once, not once per
 * read (server/metrics/outage.ts); any other error says nothing about the
 * store and is logged here, if a log is given. Each caller then does what a
 * missing answer means to it: a poll waits, a gap is looked at again, the
 * store watch retries on its next tick (and logs it).
 */
import { raceDeadline } from '../core/deadline.ts';
import type { Log } from '../core/log.ts';
import { type Message, type MessageStore, StoreUnavailableError } from '../store/store.ts';
import { type Clock, systemClock } from './clock.ts';

export interface StoreReadsOptions {
  timeoutMs: number;
  /** Where a failure other than `StoreUnavailableError` (a bug) is logged. */
  log?: Log | undefined;
  clock?: Clock;
}

export class StoreReads {
  readonly #store: MessageStore;
  readonly #options: StoreReadsOptions;
  readonly #clock: Clock;

  constructor(store: MessageStore, options: StoreReadsOptions) {
    this.#store = store;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
  }

  /** How long a missing id may still show up (`MessageStore.gapGraceMs`). */
  get gapGraceMs(): number {
    return this.#store.gapGraceMs ?? 0;
  }

  /** Messages of `room` after `since`, oldest first, at most `limit`; undefined when the store failed. */
  after(room: string, since: number, limit: number): Promise<Message[] | undefined> {
    return this.#read(this.#store.after(room, since, limit), `reading ${room} after #${since}`);
  }

  /** The largest id retention deleted in `room` (`MessageStore.pruned`); undefined when the store failed. */
  pruned(room: string): Promise<number | undefined> {
    return this.#read(this.#store.pruned(room), `reading how far ${room} has expired`);
  }

  /** The head of each room that has messages; undefined when the store failed. */
  heads(rooms: readonly string[]): Promise<Map<string, number> | undefined> {
    return this.#read(this.#store.heads(rooms), 'reading the heads');
  }

  /**
   * Whether another connection may have written since the last look. Awaited:
   * a store may answer it from another thread.
   */
  async othersWrote(): Promise<boolean> {
    if (!this.#store.othersWrote) return true;
    try {
      return await this.#store.othersWrote();
    } catch {
      return true; // No verdict: look.
    }
  }

  async #read<T>(work: Promise<T>, what: string): Promise<T | undefined> {
    const { timeoutMs, log } = this.#options;
    const late = () => new StoreUnavailableError(`${what} took longer than ${timeoutMs} ms`);
    try {
      return await raceDeadline(work, timeoutMs, late, this.#clock);
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) log?.('warn', `hub: ${what} failed`, error);
      return undefined;
    }
  }
}
