/**
 * Waiting between retries: exponential backoff with full jitter.
 *
 * Full jitter (a random delay between 0 and the exponential ceiling) spreads
 * the reconnects of every open tab after a server restart, instead of
 * having them all knock at the same instants.
 * See https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/
 */

export interface BackoffOptions {
  /** Ceiling of the first retry's delay. @default 500 */
  baseMs?: number;
  /** Highest ceiling. @default 10000 */
  capMs?: number;
  /** For tests: a number in [0, 1). @default Math.random */
  random?: () => number;
}

/**
 * The delay before retry number `attempt` (0 for the first retry). A server
 * that said `Retry-After` is believed: we never come back sooner.
 */
export function backoffDelay(
  attempt: number,
  retryAfterMs: number | undefined,
  { baseMs = 500, capMs = 10_000, random = Math.random }: BackoffOptions = {},
): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 30));
  const jittered = Math.floor(random() * ceiling);
  return Math.max(jittered, retryAfterMs ?? 0);
}

/**
 * The longest wait between two probes of a server that does not answer.
 * The page promises to be back within a second of the server's return; that
 * second holds this wait, then the probe's own round trip and the first poll,
 * so the wait leaves them a quarter of it.
 */
export const PROBE_MAX_MS = 750;

/**
 * The wait before probe number `probe` of a server that does not answer: a
 * short first one (a blip), then between half and all of `PROBE_MAX_MS`,
 * jittered so the browsers of a restarted server do not knock together.
 */
export function probeDelay(probe: number, { random = Math.random }: BackoffOptions = {}): number {
  const ceiling = probe === 0 ? PROBE_MAX_MS / 4 : PROBE_MAX_MS;
  return Math.floor(ceiling / 2 + (random() * ceiling) / 2);
}

/** Resolves after `ms`, or at once when `wake` is called (the browser came back online). */
export function sleep(ms: number): { done: Promise<void>; wake: () => void } {
  let wake = () => {};
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  return { done, wake };
}
