/** Percentile summaries of latency samples (milliseconds). */

export interface Summary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function summarise(samples: readonly number[]): Summary {
  if (samples.length === 0) return { count: 0, mean: 0, p50: 0, p90: 0, p99: 0, max: 0 };
  const sorted = Float64Array.from(samples).sort();
  let total = 0;
  for (const value of sorted) total += value;
  return {
    count: sorted.length,
    mean: round(total / sorted.length),
    p50: round(percentile(sorted, 0.5)),
    p90: round(percentile(sorted, 0.9)),
    p99: round(percentile(sorted, 0.99)),
    max: round(sorted[sorted.length - 1]!),
  };
}

/** Nearest-rank percentile of sorted samples. */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

/** A histogram of samples in `buckets` equal slices from 0 to the max: what the report draws. */
export function histogram(
  samples: readonly number[],
  buckets = 30,
): { edges: number[]; counts: number[] } {
  const max = samples.reduce((a, b) => Math.max(a, b), 0) || 1;
  const width = max / buckets;
  const counts = new Array<number>(buckets).fill(0);
  for (const value of samples) counts[Math.min(buckets - 1, Math.floor(value / width))]! += 1;
  return { edges: counts.map((_, i) => round((i + 1) * width)), counts };
}

export function round(value: number, digits = 2): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
