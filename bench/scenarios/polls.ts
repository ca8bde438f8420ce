/**
 * T4–T6, the long-poll tests, driven by the raw-socket load generator:
 * the 1-second wait, fan-out to N waiting clients, and sustained delivery
 * to re-polling subscribers.
 */

import { loadavg } from 'node:os';
import {
  type FanoutRow,
  progress,
  type Results,
  type Sizes,
  type SustainedRow,
} from '../lib/context.ts';
import type { LoadGenerator } from '../lib/load.ts';
import { baselineRow, setRatios, summariseRounds } from '../lib/ratios.ts';
import type { RunningServer } from '../lib/servers.ts';
import { histogram, round, summarise } from '../lib/stats.ts';

const freshRoom = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

/** T4: N polls on one room, answered by one send 1 s later. Each should take about 1 s. */
export async function oneSecondWait(
  server: RunningServer,
  gen: LoadGenerator,
  sizes: Sizes,
  results: Results,
): Promise<void> {
  for (const clients of sizes.t4) {
    const run = await gen.run({
      kind: 'fanout',
      target: server.target,
      room: freshRoom('t4'),
      clients,
      fireAfterMs: 1_000,
      timeoutMs: 10_000,
    });
    const latency = summarise(run.sinceRequest);
    results.t4.push({
      server: server.spec.name,
      label: server.spec.label,
      clients,
      meanMs: latency.mean,
      maxMs: latency.max,
      answered: run.answered,
    });
    progress(
      `[T4 wait 1 s] ${server.spec.label}, ${clients} clients: mean ${latency.mean} ms, max ${latency.max} ms, ${run.answered}/${clients} answered`,
    );
  }
}

/** T5 (and issue 4's cluster fan-out): N clients each hold a poll, then one send. */
export async function fanout(
  server: RunningServer,
  gen: LoadGenerator,
  clients: number,
): Promise<FanoutRow> {
  // Memory is read after a full GC (bench-only route) on one process; a
  // cluster's workers are read as they are.
  const collect = () =>
    server.spec.processes === 1 ? server.collectGarbage() : Promise.resolve(Number.NaN);
  const heapBefore = await collect();
  let heapArmed = Number.NaN;
  const rssBefore = server.rssBytes();
  const cpuBefore = server.cpuSeconds();
  let rssArmed = Number.NaN;
  let cpuArmed = Number.NaN;
  const run = await gen.run(
    { kind: 'fanout', target: server.target, room: freshRoom('t5'), clients, timeoutMs: 30_000 },
    async () => {
      cpuArmed = server.cpuSeconds();
      heapArmed = await collect();
      rssArmed = server.rssBytes();
    },
  );
  const cpuDone = server.cpuSeconds();
  const latency = summarise(run.sinceSend);
  return {
    server: server.spec.name,
    label: server.spec.label,
    clients,
    latency,
    histogram: histogram(run.sinceSend),
    answered: run.answered,
    failed: run.failed,
    bytesPerClient: Math.max(0, Math.round((rssArmed - rssBefore) / clients)),
    heapBytesPerClient: Math.round((heapArmed - heapBefore) / clients),
    // CPU time is steadier than wall time on a shared machine: compare these across changes.
    serverCpuUs: {
      perPoll: Math.round(((cpuArmed - cpuBefore) * 1e6) / clients),
      perDelivery: Math.round(((cpuDone - cpuArmed) * 1e6) / clients),
    },
    armMs: Math.round(run.armMs),
    generatorCpuShare: run.cpuShare,
  };
}

export async function fanouts(
  server: RunningServer,
  gen: LoadGenerator,
  sizes: Sizes,
  results: Results,
): Promise<void> {
  for (const clients of sizes.t5) {
    const row = await fanout(server, gen, clients);
    results.t5.push(row);
    progress(
      `[T5 fan-out] ${server.spec.label}, N=${clients}: p50 ${row.latency.p50} ms, p99 ${row.latency.p99} ms, max ${row.latency.max} ms, ` +
        `${row.answered}/${clients} answered, ${round(row.bytesPerClient / 1024, 1)} KB/client (JS heap ${round(row.heapBytesPerClient / 1024, 1)} KB), server CPU µs/client: poll ${row.serverCpuUs.perPoll}, delivery ${row.serverCpuUs.perDelivery}; generator CPU ${Math.round(row.generatorCpuShare * 100)}%`,
    );
  }
}

/**
 * T6: subscribers re-poll with cursors while senders send numbered messages,
 * each sender waiting for its acknowledgement (the workload is described at
 * `SustainedCommand`). The server's CPU is read from /proc just before the
 * first send and once the last delivery is in: CPU per delivery is steadier
 * than msg/s on a shared machine.
 */
export async function sustained(
  server: RunningServer,
  gen: LoadGenerator,
  shape: Pick<Sizes['t6'], 'subscribers' | 'senders' | 'messages'>,
): Promise<SustainedRow> {
  const expected = shape.messages * shape.subscribers;
  let cpuBefore = Number.NaN;
  let mainBefore = Number.NaN;
  let wallBefore = 0;
  const run = await gen.run(
    {
      kind: 'sustained',
      target: server.target,
      room: freshRoom('t6'),
      idleMs: 1_000,
      subscribers: shape.subscribers,
      senders: shape.senders,
      messages: shape.messages,
    },
    async () => {
      cpuBefore = server.cpuSeconds();
      mainBefore = server.mainThreadCpuSeconds();
      wallBefore = performance.now();
    },
  );
  const cpuSeconds = server.cpuSeconds() - cpuBefore;
  const mainSeconds = server.mainThreadCpuSeconds() - mainBefore;
  const wallSeconds = (performance.now() - wallBefore) / 1000;
  const sum = (key: 'lost' | 'doubled' | 'outOfOrder') =>
    run.perSubscriber.reduce((total, s) => total + s[key], 0);
  return {
    server: server.spec.name,
    label: server.spec.label,
    subscribers: shape.subscribers,
    messages: shape.messages,
    deliveredPerSec: run.deliveredPerSec,
    sendsPerSec: run.sendsPerSec,
    delivered: run.delivered,
    expected,
    sendErrors: run.sendErrors,
    incidents: run.incidents,
    lost: sum('lost'),
    doubled: sum('doubled'),
    outOfOrder: sum('outOfOrder'),
    subscribersMissingSome: run.perSubscriber.filter((s) => s.lost > 0).length,
    generatorCpuShare: run.cpuShare,
    elapsedMs: run.elapsedMs,
    serverCpuUsPerDelivery: run.delivered > 0 ? round((cpuSeconds * 1e6) / run.delivered, 1) : 0,
    mainThreadCpuUsPerDelivery:
      run.delivered > 0 ? round((mainSeconds * 1e6) / run.delivered, 1) : 0,
    serverCpuShare: round(cpuSeconds / wallSeconds),
    answers: run.answers,
    messagesPerAnswer: run.answers > 0 ? round(run.delivered / run.answers) : 0,
    serverCpuUsPerRequest: round((cpuSeconds * 1e6) / (run.answers + shape.messages), 1),
    loadAverage1m: round(loadavg()[0]!),
  };
}

/** One T6 run as a line of text. */
export function sustainedSummary(row: SustainedRow): string {
  const ratio = (value: number | undefined) =>
    value === undefined ? '' : ` (${value.toFixed(2)}× baseline)`;
  return (
    `${row.deliveredPerSec} delivered msg/s${ratio(row.ratioToBaseline)} (${row.delivered}/${row.expected}), ` +
    `server CPU ${row.serverCpuUsPerDelivery} µs/delivery${ratio(row.cpuRatioToBaseline)} (main thread ${row.mainThreadCpuUsPerDelivery}), ${row.messagesPerAnswer} msgs/answer, ${row.serverCpuUsPerRequest} µs/request, server CPU share ${Math.round((row.serverCpuShare ?? 0) * 100)}%, ` +
    `lost ${row.lost}, doubled ${row.doubled}, out of order ${row.outOfOrder}, ` +
    `generator CPU ${Math.round(row.generatorCpuShare * 100)}%, load ${row.loadAverage1m}`
  );
}

/** T6 for a server outside the rounds (the naive chat), against the baseline's median. */
export async function sustainedDelivery(
  server: RunningServer,
  gen: LoadGenerator,
  sizes: Sizes,
  results: Results,
): Promise<void> {
  const row = await sustained(server, gen, sizes.t6);
  setRatios(row, baselineRow(results));
  results.t6.push(row);
  progress(`[T6 sustained] ${server.spec.label}: ${sustainedSummary(row)}`);
}

/**
 * Runs of T6's workload that are not measured, until V8 has compiled the hot
 * paths: `sizes.t6.warmups` runs of the full size. The chat has far more code
 * on its paths than the baseline (Express, helmet, body-parser, the store):
 * measured with --trace-opt, V8 still completed 71 optimisations during the
 * chat's third full run (12-15 µs of helper-thread CPU per request, against
 * 2-3 once settled) and 3 after 6 runs; the baseline settles in one.
 */
export async function warmUp(
  server: RunningServer,
  gen: LoadGenerator,
  shape: Pick<Sizes['t6'], 'subscribers' | 'senders' | 'messages'>,
  runs: number,
): Promise<void> {
  for (let i = 0; i < runs; i++) await sustained(server, gen, shape);
}

/**
 * T6 for the chat against the baseline: a warm-up of each (`warmUp`), then
 * `sizes.t6.rounds` rounds, each running both back to back (who goes first
 * alternates), so each round's ratio compares runs a few seconds apart.
 */
export async function sustainedRounds(
  chat: RunningServer,
  baseline: RunningServer,
  gen: LoadGenerator,
  sizes: Sizes,
  results: Results,
): Promise<void> {
  const { rounds, warmups, ...shape } = sizes.t6;
  for (const server of [chat, baseline]) await warmUp(server, gen, shape, warmups);
  const runs: SustainedRow[] = [];
  for (let r = 1; r <= rounds; r++) {
    const order = r % 2 === 1 ? [chat, baseline] : [baseline, chat];
    const pair = new Map<RunningServer, SustainedRow>();
    for (const server of order) {
      const row = await sustained(server, gen, shape);
      row.round = r;
      pair.set(server, row);
    }
    const base = pair.get(baseline)!;
    setRatios(pair.get(chat)!, base);
    setRatios(base, base);
    for (const server of [chat, baseline]) {
      const row = pair.get(server)!;
      runs.push(row);
      progress(
        `[T6 sustained, round ${r}/${rounds}] ${server.spec.label}: ${sustainedSummary(row)}`,
      );
    }
  }
  results.t6Rounds = [...(results.t6Rounds ?? []), ...runs];
  for (const row of summariseRounds(runs)) {
    results.t6.push(row);
    progress(`[T6 sustained, median of ${rounds}] ${row.label}: ${sustainedSummary(row)}`);
  }
}
