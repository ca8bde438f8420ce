import { describe, expect, it } from 'vitest';
import { WriteHealth } from '../../server/metrics/write-health.ts';
import { StoreUnavailableError } from '../../server/store/store.ts';

describe('WriteHealth', () => {
  let time = 0;
  const health = () => new WriteHealth({ timeoutMs: 2_000, windowMs: 30_000, now: () => time });
  const failed = () => Promise.reject(new StoreUnavailableError('full'));
  /** Lets the outcome handlers run. */
  const settle = (work: Promise<unknown>) =>
    work.then(
      () => {},
      () => {},
    );

  describe('after a write fails', () => {
    it('fails until a write succeeds', async () => {
      time = 0;
      const writes = health();
      await settle(writes.record(failed()));
      expect(writes.failing).toBe(true);
      time = 10_000;
      expect(writes.failing).toBe(true);
      await writes.record(Promise.resolve());
      expect(writes.failing).toBe(false);
    });

    it('stops failing once the window passes without another failure', async () => {
      time = 0;
      const writes = health();
      await settle(writes.record(failed()));
      time = 29_999;
      expect(writes.failing).toBe(true);
      time = 30_000;
      expect(writes.failing).toBe(false);
    });
  });

  describe('while a write is unsettled', () => {
    it('fails once it has taken longer than the timeout', () => {
      time = 0;
      const writes = health();
      void writes.record(new Promise(() => {}));
      time = 2_000;
      expect(writes.failing).toBe(false);
      time = 2_001;
      expect(writes.failing).toBe(true);
    });
  });

  it('does not count an error that is not the store being unavailable', async () => {
    time = 0;
    const writes = health();
    await settle(writes.record(Promise.reject(new TypeError('a bug'))));
    expect(writes.failing).toBe(false);
  });
});
