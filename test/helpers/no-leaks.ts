/**
 * Run before every test file (vitest.config.ts, `setupFiles`). The suites
 * share their worker processes (`isolate: false`): a file that left fake
 * timers on, or changed the environment, would change the files run after it
 * in the same worker. This fails the file that leaves either behind, so such
 * a leak shows where it is made instead of as another file's odd failure.
 */
import { afterAll, beforeAll, expect, vi } from 'vitest';

let envAtStart: Record<string, string | undefined> = {};

beforeAll(() => {
  envAtStart = { ...process.env };
});

afterAll(() => {
  expect(vi.isFakeTimers(), 'this file left fake timers on').toBe(false);
  expect({ ...process.env }, 'this file changed process.env').toEqual(envAtStart);
});
