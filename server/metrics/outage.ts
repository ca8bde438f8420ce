/**
 * The state of a backend (the store, the bus): up or down, told by the
 * outcome of each call that uses it.
 *
 * During a 10 s database cut every request fails, and logging each one (with
 * its stack) buries the one line that matters. So a backend's outage is
 * logged once when it starts and once when it ends, at WARN, with the
 * error's message and no stack; every failure still counts in the error
 * counter, and the state is a gauge (1 up, 0 down).
 */
import type { Counter, Gauge } from 'prom-client';
import type { Log } from '../core/log.ts';

export interface OutageState {
  readonly up: boolean;
  /** A call failed: count it; the first failure of an outage logs it. */
  failed(error: unknown): void;
  /** A call succeeded: the first success after an outage logs its end. */
  ok(): void;
}

export interface OutageOptions {
  /** `store`, `bus`: the backend, in the log lines. */
  name: string;
  /** Where the changes are logged; none when another module logs them already. */
  log?: Log;
  errors?: Counter;
  upGauge?: Gauge;
  /** @default true */
  initiallyUp?: boolean;
  /**
   * While this says true, a success does not bring the backend up (and
   * takes it down): a store whose writes fail is down, however well it
   * reads (server/metrics/write-health.ts). Without it, every good read
   * after a failed send flipped the gauge back to 1.
   */
  downWhile?: () => boolean;
  now?: () => number;
}

export function createOutageState(options: OutageOptions): OutageState {
  const { name, log, errors, upGauge, downWhile, now = Date.now } = options;
  let up = options.initiallyUp ?? true;
  let since = now();
  upGauge?.set(up ? 1 : 0);

  function down(error: unknown): void {
    if (!up) return;
    up = false;
    since = now();
    upGauge?.set(0);
    log?.('warn', `${name} unavailable`, error, { backend: name, state: 'down' });
  }

  return {
    get up() {
      return up;
    },
    failed(error) {
      errors?.inc();
      down(error);
    },
    ok() {
      if (downWhile?.()) {
        down(new Error(`${name} writes fail`));
        return;
      }
      if (up) return;
      up = true;
      const downMs = now() - since;
      upGauge?.set(1);
      log?.('warn', `${name} available again after ${Math.round(downMs / 1000)} s`, undefined, {
        backend: name,
        state: 'up',
        downMs,
      });
    },
  };
}
