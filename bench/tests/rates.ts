/**
 * T1–T3, the articles' ApacheBench tests: `/time` (pure server overhead, with
 * the server's CPU per request), `/history` reads and `/send` writes.
 */
import { measureRate, type RateResult } from '../lib/ab.ts';
import { progress, type RateRow, type Results, type Sizes } from '../lib/context.ts';
import type { RunningServer } from '../lib/servers.ts';

function row(server: RunningServer, rate: RateResult): RateRow {
  return {
    server: server.spec.name,
    label: server.spec.label,
    requestsPerSec: rate.requestsPerSec,
    p50: rate.percentiles['50'] ?? 0,
    p99: rate.percentiles['99'] ?? 0,
    percentiles: rate.percentiles,
    failed: rate.failed + rate.non2xx,
  };
}

export async function timeRoute(
  server: RunningServer,
  sizes: Sizes,
  results: Results,
): Promise<void> {
  const { requests, concurrency } = sizes.t1;
  const url = `http://127.0.0.1:${server.port}/time`;
  await measureRate({ url, requests: Math.min(2_000, requests), concurrency }); // Warm up the JIT.
  const cpuBefore = server.cpuSeconds();
  const rate = await measureRate({ url, requests, concurrency });
  const cpuUsPerRequest = Math.round(((server.cpuSeconds() - cpuBefore) * 1e6) / requests);
  const result = { ...row(server, rate), cpuUsPerRequest };
  results.t1.push(result);
  progress(
    `[T1 /time] ${server.spec.label}: ${result.requestsPerSec} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, ${cpuUsPerRequest} µs CPU/request`,
  );
}

export async function historyRoute(
  server: RunningServer,
  store: string,
  sizes: Sizes,
  results: Results,
): Promise<void> {
  const { requests, concurrency } = sizes.t2;
  const room = `t2-${Date.now().toString(36)}`;
  for (let i = 0; i < 50; i++) {
    await fetch(`http://127.0.0.1:${server.port}/send`, {
      method: 'POST',
      body: new URLSearchParams({ room, nickname: 'seed', text: `history ${i}` }),
    });
  }
  const rate = await measureRate({
    url: `http://127.0.0.1:${server.port}/history?room=${room}`,
    requests,
    concurrency,
  });
  const result = { ...row(server, rate), store };
  results.t2.push(result);
  progress(
    `[T2 /history] ${server.spec.label} (${store}): ${result.requestsPerSec} req/s, p99 ${result.p99} ms`,
  );
}

export async function sendRoute(
  server: RunningServer,
  store: string,
  sizes: Sizes,
  results: Results,
): Promise<void> {
  const { requests, concurrency } = sizes.t3;
  const room = `t3-${Date.now().toString(36)}`;
  const form = new URLSearchParams({
    room,
    nickname: 'bench',
    text: 'a message of about forty characters...',
  }).toString();
  const rate = await measureRate({
    url: `http://127.0.0.1:${server.port}/send`,
    requests,
    concurrency,
    form,
  });
  const result = { ...row(server, rate), store };
  results.t3.push(result);
  progress(
    `[T3 /send] ${server.spec.label} (${store}): ${result.requestsPerSec} req/s, p99 ${result.p99} ms`,
  );
}
