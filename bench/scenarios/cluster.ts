/**
 * T7 (a CPU-bound route at WORKERS=1 and 2) and issue 4's benchmark (fan-out
 * to 10,000 polls spread over the workers, and sustained delivery, at 1 and
 * 2 workers). A server that does not fork its workers reports "cluster mode
 * not available" instead of figures.
 */
import {
  type ClusterRow,
  type CpuBoundRow,
  progress,
  type Results,
  type Sizes,
} from '../lib/context.ts';
import type { LoadGenerator } from '../lib/load.ts';
import { baselineRow, setRatios } from '../lib/ratios.ts';
import { chatSpec, type RunningServer, startServer } from '../lib/servers.ts';
import { summarise } from '../lib/stats.ts';
import { fanout, sustained } from './polls.ts';

/** Starts the chat with `workers` workers, or resolves undefined when it runs in one process only. */
async function startCluster(
  workers: number,
  databaseUrl: string,
): Promise<RunningServer | undefined> {
  const server = await startServer(
    chatSpec(`chat-w${workers}`, `chat, WORKERS=${workers}`, { databaseUrl, workers }),
  );
  if (workers === 1 || (await hasForked(server, workers))) return server;
  await server.stop();
  return undefined;
}

/**
 * Whether a server started with `workers` workers runs the primary plus
 * them. A worker answered the ready check already, so the fork has
 * happened; the grace only covers a second worker still starting.
 */
export async function hasForked(server: RunningServer, workers: number): Promise<boolean> {
  const deadline = Date.now() + 1_000;
  while (Date.now() < deadline) {
    if ((await server.processCount()) > workers) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

export async function cpuBound(
  databaseUrl: (tag: string) => string,
  gen: LoadGenerator,
  sizes: Sizes,
  results: Results,
): Promise<void> {
  for (const workers of [1, 2]) {
    const server = await startCluster(workers, databaseUrl(`t7-${workers}`));
    if (!server) {
      results.t7.push({ workers, available: false });
      progress(`[T7 CPU-bound] WORKERS=${workers}: cluster mode not available`);
      continue;
    }
    try {
      const run = await gen.run({ kind: 'mix', target: server.target, ...sizes.t7 });
      const latency = summarise(run.timeLatencies);
      const row: CpuBoundRow = {
        workers,
        available: true,
        timePerSec: run.timePerSec,
        timeP50: latency.p50,
        timeP99: latency.p99,
        burnPerSec: run.burnPerSec,
        generatorCpuShare: run.cpuShare,
      };
      results.t7.push(row);
      progress(
        `[T7 CPU-bound] WORKERS=${workers}: /time ${row.timePerSec} req/s, p99 ${row.timeP99} ms; /burn ${row.burnPerSec} req/s`,
      );
    } finally {
      await server.stop();
    }
  }
}

export async function clusterFanout(
  databaseUrl: (tag: string) => string,
  gen: LoadGenerator,
  sizes: Sizes,
  results: Results,
): Promise<void> {
  for (const workers of [1, 2]) {
    const server = await startCluster(workers, databaseUrl(`cluster-${workers}`));
    if (!server) {
      results.cluster.push({ workers, available: false });
      progress(`[cluster] WORKERS=${workers}: cluster mode not available`);
      continue;
    }
    try {
      const fan = await fanout(server, gen, sizes.cluster.clients);
      const flow = await sustained(server, gen, {
        subscribers: 100,
        senders: 4,
        messages: sizes.cluster.messages,
      });
      setRatios(flow, baselineRow(results));
      const row: ClusterRow = { workers, available: true, fanout: fan, sustained: flow };
      results.cluster.push(row);
      progress(
        `[cluster] WORKERS=${workers}: fan-out to ${fan.clients} p99 ${fan.latency.p99} ms (${fan.answered} answered, generator CPU ${Math.round(fan.generatorCpuShare * 100)}%); ` +
          `${flow.deliveredPerSec} delivered msg/s${flow.ratioToBaseline === undefined ? '' : ` (${flow.ratioToBaseline}× the baseline's median)`}, server CPU ${flow.serverCpuUsPerDelivery} µs/delivery, lost ${flow.lost} (generator CPU ${Math.round(flow.generatorCpuShare * 100)}%)`,
      );
    } finally {
      await server.stop();
    }
  }
}
