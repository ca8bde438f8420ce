/**
 * T1–T3, the articles' ApacheBench tests: `/time` (pure server overhead, with
 * the server's CPU per request; the chat against bare Express in alternating
 * rounds), `/history` reads and `/send` writes.
 */
import { loadavg } from 'node:os';
import { measureRate, type RateResult } from '../lib/ab.ts';
import { progress, type RateRow, type Results, type Sizes } from '../lib/context.ts';
import { median, medianRow } from '../lib/ratios.ts';
import type { RunningServer } from '../lib/servers.ts';
import { round } from '../lib/stats.ts';

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

/** One T1 run: a warm-up, then `ab -k` on `/time` with the server's CPU per request. */
async function timeRun(server: RunningServer, sizes: Sizes): Promise<RateRow> {
  const { requests, concurrency } = sizes.t1;
  const url = `http://127.0.0.1:${server.port}/time`;
  await measureRate({ url, requests: Math.min(2_000, requests), concurrency }); // Warm up the JIT.
  const cpuBefore = server.cpuSeconds();
  const rate = await measureRate({ url, requests, concurrency });
  const cpuUsPerRequest = Math.round(((server.cpuSeconds() - cpuBefore) * 1e6) / requests);
  return { ...row(server, rate), cpuUsPerRequest };
}

function summary(result: RateRow): string {
  return `${result.requestsPerSec} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, ${result.cpuUsPerRequest} µs CPU/request, load ${round(loadavg()[0]!)}`;
}

/** T1 once, for the servers outside the rounds (raw node:http, the naive chat). */
export async function timeRoute(
  server: RunningServer,
  sizes: Sizes,
  results: Results,
): Promise<void> {
  const result = await timeRun(server, sizes);
  results.t1.push(result);
  progress(`[T1 /time] ${server.spec.label}: ${summary(result)}`);
}

/**
 * T1 for the chat against bare Express: `sizes.t1.rounds` rounds of chat then
 * Express, back to back, both servers up throughout. A single run swings by
 * ±10% on a shared machine; the median of the per-round ratios is the figure
 * to hold against the goal (chat ≥ 0.9× bare Express).
 */
export async function timeRounds(
  chat: RunningServer,
  express: RunningServer,
  sizes: Sizes,
  results: Results,
): Promise<void> {
  const rounds = sizes.t1.rounds;
  const runs = new Map<RunningServer, RateRow[]>([
    [chat, []],
    [express, []],
  ]);
  const perRound: number[] = [];
  const cpuPerRound: number[] = [];
  for (let r = 1; r <= rounds; r++) {
    for (const server of [chat, express]) {
      const result = { ...(await timeRun(server, sizes)), round: r };
      runs.get(server)!.push(result);
      results.t1Rounds = [...(results.t1Rounds ?? []), result];
      progress(`[T1 /time, round ${r}/${rounds}] ${server.spec.label}: ${summary(result)}`);
    }
    const [c, e] = [runs.get(chat)!.at(-1)!, runs.get(express)!.at(-1)!];
    perRound.push(e.requestsPerSec > 0 ? round(c.requestsPerSec / e.requestsPerSec) : 0);
    cpuPerRound.push(round((c.cpuUsPerRequest ?? 0) / (e.cpuUsPerRequest || 1)));
  }
  const typical = (server: RunningServer) => {
    const { round: _round, ...result } = medianRow(runs.get(server)!, (x) => x.requestsPerSec);
    return result;
  };
  results.t1.push(typical(chat), typical(express));
  results.t1Ratio = {
    rounds,
    perRound,
    median: median(perRound),
    chatPerSec: typical(chat).requestsPerSec,
    expressPerSec: typical(express).requestsPerSec,
    cpuPerRound,
    cpuMedian: median(cpuPerRound),
  };
  progress(
    `[T1 /time] chat ÷ bare Express: median ${results.t1Ratio.median}× over ${rounds} alternating rounds (${perRound.join(', ')}); CPU per request chat ÷ Express, median ${results.t1Ratio.cpuMedian}× (${cpuPerRound.join(', ')})`,
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
