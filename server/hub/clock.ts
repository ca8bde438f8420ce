/**
 * The hub's clock: the time and the timers it runs on, handed in so its
 * tests run it on a clock they move by hand (test/helpers/manual-clock.ts)
 * and never wait out a real poll timeout (docs/design.md, "The hub"). The
 * modules around it that read the time or arm a timer take it, or its
 * `now`, the same way (`SharedPresence`'s `clock`, `LocalPresence`'s and
 * `SteadyCount`'s `now`, `WriteHealth`'s `now` and `timers`).
 *
 * `systemClock` looks the globals up at each call, not once at import.
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
