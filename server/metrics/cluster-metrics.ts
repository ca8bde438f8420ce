/**
 * Metrics of a cluster: one answer for every worker of the machine.
 *
 * The primary holds prom-client's `AggregatorRegistry`, which asks each
 * worker for its metrics over the IPC channel and adds them up
 * (server/metrics/metrics.ts says how). It serves the sum
 * - on `METRICS_PORT`, itself, when that is set;
 * - otherwise to a worker asked for `/metrics` on the chat's port, which
 *   forwards the question to the primary (`askPrimaryForMetrics`), so any
 *   worker the connection lands on answers for all of them.
 *
 * The messages are tagged `lpchatMetrics`, apart from the chat's own IPC
 * (server/bus/cluster-ipc.ts), whose handlers ignore them.
 */
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Config } from '../core/config.ts';
import type { Log } from '../core/log.ts';
import { listenMetrics, type MetricsSource } from './serve.ts';

type MetricsIpc =
  | { lpchatMetrics: 'ask'; seq: number }
  | { lpchatMetrics: 'answer'; seq: number; text?: string; error?: string };

function isMetricsIpc(value: unknown): value is MetricsIpc {
  return typeof value === 'object' && value !== null && 'lpchatMetrics' in value;
}

/** Longer than prom-client's own 5 s wait for the workers. */
const ASK_TIMEOUT_MS = 6_000;

/** In the primary: aggregate the workers' metrics and serve them. */
export async function serveClusterMetrics(
  config: Pick<Config, 'metrics' | 'metricsPort' | 'host'>,
  log: Log,
): Promise<void> {
  if (!config.metrics) return;
  const aggregator = new AggregatorRegistry();
  const source: MetricsSource = {
    render: () => aggregator.clusterMetrics(),
    contentType: aggregator.contentType,
  };
  cluster.on('message', (worker: Worker, raw: unknown) => {
    if (!isMetricsIpc(raw) || raw.lpchatMetrics !== 'ask') return;
    const answer = (fields: { text?: string; error?: string }) => {
      if (worker.isConnected()) worker.send({ lpchatMetrics: 'answer', seq: raw.seq, ...fields });
    };
    source.render().then(
      (text) => answer({ text }),
      (error: unknown) => answer({ error: (error as Error).message }),
    );
  });
  if (config.metricsPort !== undefined) {
    await listenMetrics(source, config.metricsPort, config.host, log);
    log('info', `metrics of every worker on port ${config.metricsPort}`);
  }
}

const pending = new Map<
  number,
  { resolve(text: string): void; reject(error: Error): void; timer: NodeJS.Timeout }
>();
let nextSeq = 0;
let listening = false;

function onAnswer(raw: unknown): void {
  if (!isMetricsIpc(raw) || raw.lpchatMetrics !== 'answer') return;
  const ask = pending.get(raw.seq);
  if (!ask) return;
  pending.delete(raw.seq);
  clearTimeout(ask.timer);
  if (raw.text !== undefined) ask.resolve(raw.text);
  else ask.reject(new Error(`the primary cannot collect the metrics: ${raw.error}`));
}

/** In a worker: the whole cluster's metrics, from the primary. */
export const clusterMetricsFromPrimary: MetricsSource = {
  contentType: AggregatorRegistry.PROMETHEUS_CONTENT_TYPE,
  render(): Promise<string> {
    if (!listening) {
      process.on('message', onAnswer);
      listening = true;
    }
    return new Promise((resolve, reject) => {
      if (!process.send || !process.connected) {
        reject(new Error('no channel to the cluster primary'));
        return;
      }
      const seq = nextSeq++;
      const timer = setTimeout(() => {
        pending.delete(seq);
        reject(new Error(`the primary did not send the metrics within ${ASK_TIMEOUT_MS} ms`));
      }, ASK_TIMEOUT_MS);
      pending.set(seq, { resolve, reject, timer });
      process.send({ lpchatMetrics: 'ask', seq } satisfies MetricsIpc);
    });
  },
};
