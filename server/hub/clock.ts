/**
 * The hub's clock: the time and the timers it runs on, handed in so its
 * tests run on vitest's fake timers (`vi.useFakeTimers()`) and never wait
 * out a real poll timeout (docs/design.md, "The hub").
 *
 * `systemClock` looks the globals up at each call, not once at import: a
 * test that fakes the timers after this module loaded still drives it.
 */
export type Timer = ReturnType<typeof setTimeout>;

export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): Timer;
  clearTimeout(timer: Timer | undefined): void;
  setInterval(callback: () => void, ms: number): Timer;
  clearInterval(timer: Timer | undefined): void;
  /** After the current turn of the event loop: how the hub batches a turn's work. */
  setImmediate(callback: () => void): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (timer) => clearTimeout(timer),
  setInterval: (callback, ms) => setInterval(callback, ms),
  clearInterval: (timer) => clearInterval(timer),
  setImmediate: (callback) => {
    setImmediate(callback);
  },
};
