/**
 * The server tests' one fake time: a `Clock` (server/hub/clock.ts) whose
 * time moves only when the test says so. A hub (test/hub/fixture.ts), or
 * the hub of a real server (`startTestChat(…, { clock })`), runs its timers
 * on it, so a test sees a poll time out without waiting for it; a module
 * that only reads the time takes its `now` (`now: () => clock.now()`).
 * Nothing global is faked: sockets, fetch, `setImmediate` and the event
 * loop's turns stay real.
 *
 * Two ways to move it:
 * - `advance(ms)` runs the timers that fall due, in order, one straight
 *   after another: for a test that reads the outcome over a socket, or of
 *   timers that start no asynchronous work;
 * - `await advanceAsync(ms)` yields a turn of the event loop before the
 *   first timer and after each one (as vitest's `advanceTimersByTimeAsync`
 *   does), so the promises a timer started, and the `setImmediate`s they
 *   queued, run before the next timer falls due.
 */
import type { Clock, Timer } from '../../server/hub/clock.ts';

interface Scheduled {
  at: number;
  every: number | undefined;
  callback: () => void;
  handle: Timer;
}

/** A turn of the event loop: the microtasks, and the `setImmediate`s queued before it. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class ManualClock implements Clock {
  #now: number;
  readonly #scheduled = new Set<Scheduled>();

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  /** Timers set and not yet run or cleared (an interval counts once). */
  get pending(): number {
    return this.#scheduled.size;
  }

  setTimeout(callback: () => void, ms: number): Timer {
    return this.#schedule(callback, ms, undefined);
  }

  setInterval(callback: () => void, ms: number): Timer {
    return this.#schedule(callback, ms, Math.max(1, ms));
  }

  clearTimeout(timer: Timer | undefined): void {
    for (const item of this.#scheduled) if (item.handle === timer) this.#scheduled.delete(item);
  }

  clearInterval(timer: Timer | undefined): void {
    this.clearTimeout(timer);
  }

  setImmediate(callback: () => void): void {
    setImmediate(callback);
  }

  /** Moves time on by `ms`, running every timer that falls due, in order. */
  advance(ms: number): void {
    const until = this.#now + ms;
    while (this.#runNext(until));
    this.#now = until;
  }

  /** `advance`, with a turn of the event loop before the first timer and after each. */
  async advanceAsync(ms: number): Promise<void> {
    const until = this.#now + ms;
    await turn();
    while (this.#runNext(until)) await turn();
    this.#now = until;
  }

  /**
   * The wall clock set back by `ms` (an NTP step): `now()` jumps back, and
   * the timers, which run on a monotonic clock, keep their delays.
   */
  setBack(ms: number): void {
    this.#now -= ms;
    for (const item of this.#scheduled) item.at -= ms;
  }

  /** Runs the earliest timer due by `until`, moving time to it; false when none is. */
  #runNext(until: number): boolean {
    let next: Scheduled | undefined;
    for (const item of this.#scheduled) if (!next || item.at < next.at) next = item;
    if (!next || next.at > until) return false;
    this.#now = Math.max(this.#now, next.at);
    if (next.every === undefined) this.#scheduled.delete(next);
    else next.at += next.every;
    next.callback();
    return true;
  }

  #schedule(callback: () => void, ms: number, every: number | undefined): Timer {
    // A real, never-armed Timeout as the handle: callers may `unref()` it.
    const handle = setTimeout(() => {}, 0);
    clearTimeout(handle);
    this.#scheduled.add({ at: this.#now + Math.max(0, ms), every, callback, handle });
    return handle;
  }
}
