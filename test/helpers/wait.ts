/**
 * The suites' one wait helper: resolves when `check()` holds (a boolean, or
 * a promise of one, for a check that asks a server), asked by vitest's
 * `vi.waitFor` every few milliseconds, never a fixed sleep; fails with
 * `what` after `timeoutMs`. It waits in real time: the server tests fake no
 * globals, and what a `ManualClock` runs (test/helpers/manual-clock.ts)
 * moves only when the test advances it, never while this waits.
 */
import { vi } from 'vitest';

export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 5_000,
  intervalMs = 5,
): Promise<void> {
  await vi.waitFor(
    async () => {
      if (!(await check())) throw new Error(`Timed out waiting for ${what}`);
    },
    { timeout: timeoutMs, interval: intervalMs },
  );
}
