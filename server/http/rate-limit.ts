/**
 * A token bucket per client address for `POST /send`: `ratePerSec` sends a
 * second on average, bursts of up to `burst`. Past it: 429 `rate_limited`
 * with `Retry-After`. Behind a proxy, set `TRUST_PROXY` so `req.ip` is the
 * visitor's address and not the proxy's.
 */
import { httpError } from '../errors.ts';

interface Bucket {
  tokens: number;
  updated: number;
}

export function createRateLimit(ratePerSec: number, burst: number, now: () => number = Date.now) {
  const buckets = new Map<string, Bucket>();
  // Forget full buckets now and then, so the map holds only recent senders.
  const sweep = setInterval(() => {
    const t = now();
    for (const [address, bucket] of buckets) {
      if (bucket.tokens + ((t - bucket.updated) / 1000) * ratePerSec >= burst) {
        buckets.delete(address);
      }
    }
  }, 60_000);
  sweep.unref();

  return {
    take(address: string): void {
      if (ratePerSec === 0) return;
      const t = now();
      const bucket = buckets.get(address) ?? { tokens: burst, updated: t };
      bucket.tokens = Math.min(burst, bucket.tokens + ((t - bucket.updated) / 1000) * ratePerSec);
      bucket.updated = t;
      if (bucket.tokens < 1) {
        buckets.set(address, bucket);
        const retryAfter = Math.ceil((1 - bucket.tokens) / ratePerSec);
        throw httpError('rate_limited', undefined, { retryAfter });
      }
      bucket.tokens -= 1;
      buckets.set(address, bucket);
    },
    close(): void {
      clearInterval(sweep);
    },
  };
}
