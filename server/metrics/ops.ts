/**
 * What a running chat gives its operators, built once by `startChat`: the
 * metrics, the telemetry of the long-poll path, the up/down state of the
 * store and the bus, and where `/metrics` is served.
 *
 * | set-up                         | `/metrics` on the chat's port | on `METRICS_PORT`           |
 * |--------------------------------|-------------------------------|-----------------------------|
 * | one process                    | this process                  | this process, its own port  |
 * | a cluster worker               | every worker, via the primary | (the primary serves it)     |
 * | `METRICS=off`                  | 404                           | nothing listens             |
 */
import cluster from 'node:cluster';
import type { Server } from 'node:http';
import type { Redis } from 'ioredis';
import type { RedisHealth } from '../bus/redis-health.ts';
import { clientAddress } from '../core/client-address.ts';
import type { Config } from '../core/config.ts';
import { type Log, loggerOf } from '../core/log.ts';
import { clusterMetricsFromPrimary } from './cluster-metrics.ts';
import {
  answerThePrimary,
  type ChatMetrics,
  createMetrics,
  type MetricsSources,
} from './metrics.ts';
import { createOutageState, type OutageState } from './outage.ts';
import { listenMetrics, type MetricsSource } from './serve.ts';
import { createTelemetry, type Telemetry } from './telemetry.ts';
import type { WriteHealth } from './write-health.ts';

export interface ChatOps {
  readonly metrics: ChatMetrics;
  /** For the long-poll path: each poll's end and each delivery. */
  readonly telemetry: Telemetry;
  /**
   * The store's state. One writer tells it each store call's outcome: the
   * store wrapper of `WriteHealth.track` (write-health.ts). It stays down
   * while the store's writes fail (`OpsInput.writes`), however well it reads.
   */
  readonly store: OutageState;
  /** The bus's state, from its Redis connections and heartbeat (always up without Redis). */
  readonly bus: OutageState;
  /** What `GET /metrics` on the chat's port answers; undefined when it is served elsewhere or off. */
  readonly metricsOnChatPort: MetricsSource | undefined;
  /** The port of the metrics' own server, when this process runs one. */
  readonly metricsServer: Server | undefined;
  close(): Promise<void>;
}

export interface OpsInput extends MetricsSources {
  log: Log;
  /** The bus's Redis connection, whose errors are counted. */
  redis?: Redis | undefined;
  /** Whether Redis answers (connected, and the heartbeat within its deadline): the bus's state. */
  redisHealth?: RedisHealth | undefined;
  /** The outcome of the store's writes: the store is down while they fail. */
  writes?: WriteHealth | undefined;
}

export async function startOps(
  config: Pick<
    Config,
    'metrics' | 'metricsPort' | 'host' | 'metricsHost' | 'trustProxy' | 'forwardedForMaxBytes'
  >,
  input: OpsInput,
): Promise<ChatOps> {
  const { log, redis, redisHealth, writes } = input;
  const metrics = createMetrics(input);
  const store = createOutageState({
    name: 'store',
    log,
    errors: metrics.storeErrors,
    upGauge: metrics.storeUp,
    downWhile: writes && (() => writes.failing),
  });
  // The Redis connections and their heartbeat log their own outages
  // (server/process/redis-connections.ts, server/bus/redis-health.ts): here
  // they only count. A silent Redis is down as a closed one is.
  const bus = createOutageState({
    name: 'bus',
    errors: metrics.busErrors,
    upGauge: metrics.busUp,
    initiallyUp: redisHealth?.up ?? (redis === undefined || redis.status === 'ready'),
  });
  const onRedisError = (error: Error) => bus.failed(error);
  const onRedisReady = () => {
    if (redisHealth?.up !== false) bus.ok();
  };
  redis?.on('error', onRedisError).on('ready', onRedisReady);
  const stopWatching = redisHealth?.onChange((up) =>
    up
      ? bus.ok()
      : bus.failed(
          new Error(`Redis is unreachable or did not answer within ${redisHealth.timeoutMs} ms`),
        ),
  );

  let metricsOnChatPort: MetricsSource | undefined;
  let metricsServer: Server | undefined;
  if (config.metrics) {
    if (cluster.isWorker) {
      answerThePrimary(metrics);
      if (config.metricsPort === undefined) metricsOnChatPort = clusterMetricsFromPrimary;
    } else if (config.metricsPort === undefined) {
      metricsOnChatPort = metrics;
    } else {
      const host = config.metricsHost ?? config.host;
      metricsServer = await listenMetrics(metrics, config.metricsPort, host, log);
      log('info', `metrics on port ${config.metricsPort}`);
    }
  }

  return {
    metrics,
    telemetry: createTelemetry(
      metrics,
      loggerOf(log),
      clientAddress(config.trustProxy, config.forwardedForMaxBytes),
    ),
    store,
    bus,
    metricsOnChatPort,
    metricsServer,
    async close() {
      redis?.off('error', onRedisError).off('ready', onRedisReady);
      stopWatching?.();
      if (metricsServer) {
        const closed = new Promise((resolve) => metricsServer!.close(resolve));
        metricsServer.closeAllConnections();
        await closed;
      }
      metrics.close();
    },
  };
}
