/**
 * T4–T6, the long-poll tests, driven by the raw-socket load generator:
 * the 1-second wait, fan-out to N waiting clients, and sustained delivery
 * to re-polling subscribers.
 */

import {
  type FanoutRow,
  progress,
  type Results,
  type Sizes,
  type SustainedRow,
} from '../lib/context.ts';
import type { LoadGenerator } from '../lib/load.ts';
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

/** T6: subscribers re-poll with cursors while senders send numbered messages. */
export async function sustained(
  server: RunningServer,
  gen: LoadGenerator,
  shape: Sizes['t6'],
): Promise<SustainedRow> {
  const expected = shape.messages * shape.subscribers;
  const run = await gen.run({
    kind: 'sustained',
    target: server.target,
    room: freshRoom('t6'),
    idleMs: 1_000,
    ...shape,
  });
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
    lost: sum('lost'),
    doubled: sum('doubled'),
    outOfOrder: sum('outOfOrder'),
    subscribersMissingSome: run.perSubscriber.filter((s) => s.lost > 0).length,
    generatorCpuShare: run.cpuShare,
  };
}

export async function sustainedDelivery(
  server: RunningServer,
  gen: LoadGenerator,
  sizes: Sizes,
  results: Results,
): Promise<void> {
  const row = await sustained(server, gen, sizes.t6);
  results.t6.push(row);
  progress(
    `[T6 sustained] ${server.spec.label}: ${row.deliveredPerSec} delivered msg/s (${row.delivered}/${row.expected}), ` +
      `lost ${row.lost}, doubled ${row.doubled}, out of order ${row.outOfOrder}, generator CPU ${Math.round(row.generatorCpuShare * 100)}%`,
  );
}
