/**
 * Request-rate tests the way the original articles ran them: ApacheBench,
 * `ab -n N -c C -k`. When `ab` is not installed (Debian: `apache2-utils`),
 * autocannon from node_modules does the same job (`BENCH_NO_AB=1` forces it).
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface RateResult {
  tool: 'ab' | 'autocannon';
  requestsPerSec: number;
  /** Latency percentiles in ms: 50, 66, 75, 80, 90, 95, 98, 99, 100 (ab's own table). */
  percentiles: Record<string, number>;
  failed: number;
  non2xx: number;
}

export interface RateOptions {
  url: string;
  requests: number;
  concurrency: number;
  /** A form body to POST. */
  form?: string;
}

const run = promisify(execFile);

export const hasAb = process.env.BENCH_NO_AB
  ? false
  : (() => {
      try {
        execFileSync('ab', ['-V'], { stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    })();

export async function measureRate(options: RateOptions): Promise<RateResult> {
  return hasAb ? withAb(options) : withAutocannon(options);
}

async function withAb({ url, requests, concurrency, form }: RateOptions): Promise<RateResult> {
  const args = ['-q', '-k', '-n', String(requests), '-c', String(concurrency)];
  // ab reads a POST body only from a file: one folder per run, removed when ab is done.
  let dir: string | undefined;
  if (form !== undefined) {
    dir = mkdtempSync(join(tmpdir(), 'bench-form-'));
    const file = join(dir, 'body.txt');
    writeFileSync(file, form);
    args.push('-p', file, '-T', 'application/x-www-form-urlencoded');
  }
  let stdout: string;
  try {
    ({ stdout } = await run('ab', [...args, url], { maxBuffer: 1 << 20 }));
  } finally {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
  const number = (pattern: RegExp) => Number(pattern.exec(stdout)?.[1] ?? 0);
  const percentiles: Record<string, number> = {};
  for (const [, q, ms] of stdout.matchAll(/^\s+(\d+)%\s+(\d+)/gm)) percentiles[q!] = Number(ms);
  return {
    tool: 'ab',
    requestsPerSec: Math.round(number(/Requests per second:\s+([\d.]+)/)),
    percentiles,
    // ab counts an answer whose length differs from the first one as failed:
    // every `/send` answer carries a different id, so those are not failures.
    failed: number(/Failed requests:\s+(\d+)/) - number(/Length: (\d+)/),
    non2xx: number(/Non-2xx responses:\s+(\d+)/),
  };
}

async function withAutocannon({
  url,
  requests,
  concurrency,
  form,
}: RateOptions): Promise<RateResult> {
  const { default: autocannon } = await import('autocannon');
  const result = await autocannon({
    url,
    amount: requests,
    connections: concurrency,
    ...(form === undefined
      ? {}
      : {
          method: 'POST',
          body: form,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        }),
  });
  const l = result.latency;
  return {
    tool: 'autocannon',
    // `requests.average` is a mean over 1-second buckets: wrong for a run shorter than a second.
    requestsPerSec: Math.round(result.requests.total / result.duration),
    percentiles: { 50: l.p50, 90: l.p90, 99: l.p99, 100: l.max },
    failed: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}
