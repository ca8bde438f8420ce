/**
 * The one timeout race: `work`, or the error `late` makes once `ms` have
 * passed. The work itself goes on; a caller that cares (a late append)
 * still sees its result. The store's deadline (`STORE_TIMEOUT_MS`) and
 * Redis's (`REDIS_TIMEOUT_MS`) both run on it, each with its own error.
 */

/** The timers a deadline runs on: the process's, or a test's clock (server/hub/clock.ts). */
export interface DeadlineTimers<T = ReturnType<typeof setTimeout>> {
  setTimeout(callback: () => void, ms: number): T;
  clearTimeout(timer: T | undefined): void;
}

const processTimers: DeadlineTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (timer) => clearTimeout(timer),
};

export function raceDeadline<T, Timer = ReturnType<typeof setTimeout>>(
  work: Promise<T>,
  ms: number,
  late: () => Error,
  timers: DeadlineTimers<Timer> = processTimers as unknown as DeadlineTimers<Timer>,
): Promise<T> {
  let timer: Timer | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = timers.setTimeout(() => reject(late()), ms);
  });
  return Promise.race([work, deadline]).finally(() => timers.clearTimeout(timer));
}
