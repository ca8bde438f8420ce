import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createOutageState } from '../../server/metrics/outage.ts';
import { WriteHealth } from '../../server/metrics/write-health.ts';
import { MemoryStore } from '../../server/store/memory-store.ts';
import { StoreUnavailableError } from '../../server/store/store.ts';
import { ManualClock } from '../helpers/manual-clock.ts';

describe('WriteHealth', () => {
  let clock: ManualClock;
  beforeEach(() => {
    clock = new ManualClock(0);
  });
  const health = () =>
    new WriteHealth({ timeoutMs: 2_000, windowMs: 30_000, now: () => clock.now(), timers: clock });
  const failed = () => Promise.reject(new StoreUnavailableError('full'));
  /** Lets the outcome handlers run. */
  const settle = (work: Promise<unknown>) =>
    work.then(
      () => {},
      () => {},
    );

  describe('after a write fails', () => {
    it('fails until a write succeeds', async () => {
      const writes = health();
      await settle(writes.record(failed()));
      expect(writes.failing).toBe(true);
      clock.advance(10_000);
      expect(writes.failing).toBe(true);
      await writes.record(Promise.resolve());
      expect(writes.failing).toBe(false);
    });

    it('stops failing once the window passes without another failure', async () => {
      const writes = health();
      await settle(writes.record(failed()));
      clock.advance(29_999);
      expect(writes.failing).toBe(true);
      clock.advance(1);
      expect(writes.failing).toBe(false);
    });
  });

  describe('while a write is unsettled', () => {
    it('fails once it has taken longer than the timeout', () => {
      const writes = health();
      void writes.record(new Promise(() => {}));
      clock.advance(2_000);
      expect(writes.failing).toBe(false);
      clock.advance(1);
      expect(writes.failing).toBe(true);
    });
  });

  it('does not count an error that is not the store being unavailable', async () => {
    const writes = health();
    await settle(writes.record(Promise.reject(new TypeError('a bug'))));
    expect(writes.failing).toBe(false);
  });

  describe("track(store, state): the one writer of the store's up/down state", () => {
    /** A state whose `ok` and `failed` are spies. */
    const spied = () => ({ up: true, ok: vi.fn(), failed: vi.fn() });

    it('tells ok of a call that succeeds, before the caller goes on', async () => {
      const state = spied();
      const store = health().track(new MemoryStore(), state);
      await store.append({ room: 'main', nickname: 'n', text: 'hi' });
      expect(state.ok).toHaveBeenCalledTimes(1);
      await store.after('main', 0, 10);
      await store.before('main', undefined, 10);
      await store.heads(['main']);
      await store.pruned('main');
      await store.ping();
      expect(state.ok).toHaveBeenCalledTimes(6);
      expect(state.failed).not.toHaveBeenCalled();
    });

    it('tells failed of a StoreUnavailableError, and nothing of any other error', async () => {
      const state = spied();
      const inner = Object.assign(new MemoryStore(), {
        ping: () => Promise.reject(new StoreUnavailableError('ECONNREFUSED')),
        heads: () => Promise.reject(new TypeError('a bug')),
      });
      const store = health().track(inner, state);
      await expect(store.ping()).rejects.toThrow('ECONNREFUSED');
      await expect(store.heads(['main'])).rejects.toThrow('a bug');
      expect(state.failed).toHaveBeenCalledExactlyOnceWith(expect.any(StoreUnavailableError));
      expect(state.ok).not.toHaveBeenCalled();
    });

    it('takes the store down at the deadline, once, and passes the late answer on untold', async () => {
      const state = createOutageState({ name: 'store' });
      let land: (() => void) | undefined;
      const inner = Object.assign(new MemoryStore(), {
        ping: () => new Promise<void>((resolve) => (land = resolve)),
      });
      const store = health().track(inner, state);
      const pinged = store.ping();
      await clock.advanceAsync(1_999);
      expect(state.up).toBe(true);
      await clock.advanceAsync(1);
      expect(state.up).toBe(false);
      land!();
      await pinged; // The caller still gets the call's own outcome.
      expect(state.up).toBe(false);
    });
  });
});
