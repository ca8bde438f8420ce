/**
 * A clock for the hub of a real server under test (`startTestChat(…, { clock })`):
 * its time moves only when the test says so (`advance`), so a lane test
 * sees a poll time out without waiting for it, while sockets, fetch and
 * the event loop's turns stay real (server/hub/clock.ts).
 */
import type { Clock, Timer } from '../../server/hub/clock.ts';

interface Scheduled {
  at: number;
  every: number | undefined;
  callback: () => void;
  handle: Timer;
}

export class ManualClock implements Clock {
  #now: number;
  readonly #scheduled = new Set<Scheduled>();

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
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
    for (;;) {
      let next: Scheduled | undefined;
      for (const item of this.#scheduled) if (!next || item.at < next.at) next = item;
      if (!next || next.at > until) break;
      this.#now = Math.max(this.#now, next.at);
      if (next.every === undefined) this.#scheduled.delete(next);
      else next.at += next.every;
      next.callback();
    }
    this.#now = until;
  }

  #schedule(callback: () => void, ms: number, every: number | undefined): Timer {
    // A real, never-armed Timeout as the handle: callers may `unref()` it.
    const handle = setTimeout(() => {}, 0);
    clearTimeout(handle);
    this.#scheduled.add({ at: this.#now + Math.max(0, ms), every, callback, handle });
    return handle;
  }
}
