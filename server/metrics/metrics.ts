/**
 * The chat's Prometheus metrics (prom-client): what an operator watches.
 *
 * Each running chat has its own registry of chat metrics, so tests can start
 * several chats in one process; Node's process metrics (memory, CPU, event
 * loop lag, GC) are per process and collected once, in a registry they share.
 *
 * Gauges that belong to other modules (waiting polls, rooms in memory) are
 * read when scraped, through the callbacks the caller passes: nothing is
 * counted twice and the hub pays nothing between scrapes.
 *
 * In a cluster, every worker's registries answer the primary's
 * `AggregatorRegistry` (server/metrics/cluster-metrics.ts), which adds them
 * up: counters and histograms are summed, "up" gauges take the minimum (one
 * worker without its store makes the machine's store down).
 */
import {
  AggregatorRegistry,
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  Registry,
} from 'prom-client';

export interface MetricsSources {
  /** The store's and the bus's kinds (`chat_info`). */
  store: string;
  bus: string;
  /** Waiting polls this process holds now. */
  waiting?: () => number;
  /** Most waiting polls this process may hold (`MAX_WAITERS`): full when waiting reaches it. */
  maxWaiters?: number;
  /** Rooms the message log holds in memory now. */
  rooms?: () => number;
}

export interface ChatMetrics {
  readonly registry: Registry;
  /** New messages stored (a repeated idempotency key is not a new message). */
  readonly sent: Counter;
  /** Messages written to waiting polls: one message to one poll counts once. */
  readonly delivered: Counter;
  /** How long each `GET /recv` lasted, by how it ended (`PollOutcome`). */
  readonly pollSeconds: Histogram<'outcome'>;
  /** From a `POST /send`'s arrival to its acknowledgement, for sends that were stored. */
  readonly sendSeconds: Histogram;
  /** Requests answered with an error, by error code (`rate_limited`, `invalid_room`, …). */
  readonly refused: Counter<'code'>;
  readonly storeErrors: Counter;
  readonly storeUp: Gauge;
  readonly busErrors: Counter;
  readonly busUp: Gauge;
  /** This process's metrics and Node's, in the Prometheus text format. */
  render(): Promise<string>;
  readonly contentType: string;
  /** Unregisters the metrics (a chat that closes; the process registry stays). */
  close(): void;
}

let processRegistry: Registry | undefined;

/** Node's default process metrics, collected once per process. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export function createMetrics(sources: MetricsSources): ChatMetrics {
  const registry = new Registry();
  const registers = [registry];

  const info = new Gauge({
    name: 'chat_info',
    help: 'The store and bus this chat uses (always 1).',
    labelNames: ['store', 'bus'],
    registers,
    aggregator: 'first',
  });
  info.set({ store: sources.store, bus: sources.bus }, 1);

  const { waiting, rooms, maxWaiters } = sources;
  if (waiting) {
    new Gauge({
      name: 'chat_polls_waiting',
      help: 'GET /recv requests waiting for a message.',
      registers,
      aggregator: 'sum',
      collect() {
        this.set(waiting());
      },
    });
  }
  if (maxWaiters !== undefined) {
    new Gauge({
      name: 'chat_polls_max',
      help: 'Most waiting polls the process holds (MAX_WAITERS); past it /recv answers 503.',
      registers,
      aggregator: 'sum',
    }).set(maxWaiters);
  }
  if (rooms) {
    new Gauge({
      name: 'chat_rooms_in_memory',
      help: 'Rooms whose recent messages and waiting polls are held in memory.',
      registers,
      aggregator: 'sum',
      collect() {
        this.set(rooms());
      },
    });
  }

  const storeUp = new Gauge({
    name: 'chat_store_up',
    help: '1 while the message store answers and takes writes, 0 while it does not.',
    registers,
    aggregator: 'min',
  });
  storeUp.set(1);
  const busUp = new Gauge({
    name: 'chat_bus_up',
    help: '1 while the bus between processes (Redis) is connected, 0 while it is not.',
    registers,
    aggregator: 'min',
  });
  busUp.set(1);

  const metrics: ChatMetrics = {
    registry,
    sent: new Counter({
      name: 'chat_messages_sent_total',
      help: 'Messages stored by POST /send (a repeated idempotency key does not count).',
      registers,
    }),
    delivered: new Counter({
      name: 'chat_messages_delivered_total',
      help: 'Messages written to waiting polls (one message to one poll counts once).',
      registers,
    }),
    pollSeconds: new Histogram({
      name: 'chat_poll_duration_seconds',
      help: 'How long GET /recv requests lasted, by how they ended.',
      labelNames: ['outcome'],
      // From answers at once to the whole poll timeout (25 s by default).
      buckets: [0.005, 0.05, 0.25, 1, 2.5, 5, 10, 20, 26, 30, 60],
      registers,
    }),
    sendSeconds: new Histogram({
      name: 'chat_send_duration_seconds',
      help: 'From the arrival of a POST /send to its acknowledgement (the message is stored).',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    refused: new Counter({
      name: 'chat_requests_refused_total',
      help: 'Requests answered with an error, by error code (rate_limited, overloaded, invalid_room, ...).',
      labelNames: ['code'],
      registers,
    }),
    storeErrors: new Counter({
      name: 'chat_store_errors_total',
      help: 'Store calls that failed or timed out.',
      registers,
    }),
    storeUp,
    busErrors: new Counter({
      name: 'chat_bus_errors_total',
      help: 'Errors of the connection to the bus (Redis), reconnection attempts included.',
      registers,
    }),
    busUp,
    contentType: registry.contentType,
    async render() {
      const [process, chat] = await Promise.all([processMetrics().metrics(), registry.metrics()]);
      return `${process}\n${chat}`;
    },
    close() {
      registry.clear();
    },
  };

  return metrics;
}

/**
 * In a cluster worker: answer the primary's `AggregatorRegistry` with this
 * worker's metrics. prom-client listens for its requests once an
 * `AggregatorRegistry` exists in the worker.
 */
export function answerThePrimary(metrics: ChatMetrics): void {
  AggregatorRegistry.setRegistries([processMetrics(), metrics.registry]);
  new AggregatorRegistry();
}
