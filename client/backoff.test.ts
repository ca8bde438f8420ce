import { describe, expect, it } from 'vitest';
import { backoffDelay, PROBE_MAX_MS, probeDelay } from './backoff.ts';

describe('backoffDelay', () => {
  const almostOne = () => 0.999_999;

  it('should stay under a ceiling that doubles from 500 ms', () => {
    expect(backoffDelay(0, undefined, { random: almostOne })).toBe(499);
    expect(backoffDelay(1, undefined, { random: almostOne })).toBe(999);
    expect(backoffDelay(3, undefined, { random: almostOne })).toBe(3999);
  });

  it('should never pass the 10 s cap, however many failures', () => {
    expect(backoffDelay(5, undefined, { random: almostOne })).toBe(9999);
    expect(backoffDelay(500, undefined, { random: almostOne })).toBe(9999);
  });

  it('should spread delays over the whole range (full jitter)', () => {
    expect(backoffDelay(3, undefined, { random: () => 0 })).toBe(0);
    expect(backoffDelay(3, undefined, { random: () => 0.5 })).toBe(2000);
  });

  it('should never come back sooner than Retry-After', () => {
    expect(backoffDelay(0, 3000, { random: almostOne })).toBe(3000);
    expect(backoffDelay(5, 3000, { random: almostOne })).toBe(9999);
  });
});

describe('probeDelay', () => {
  it('should probe a silent server soon, then between half and all of PROBE_MAX_MS, jittered', () => {
    expect(probeDelay(0, { random: () => 0.999_999 })).toBeLessThan(PROBE_MAX_MS / 4);
    for (const random of [0, 0.5, 0.999_999]) {
      const delay = probeDelay(5, { random: () => random });
      expect(delay).toBeGreaterThanOrEqual(PROBE_MAX_MS / 2);
      expect(delay).toBeLessThan(PROBE_MAX_MS);
    }
  });
});
