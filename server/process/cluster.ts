/**
 * The cluster primary (`WORKERS` > 1): forks the workers, which share one
 * port (or Unix socket path), and does four jobs. It serves no chat HTTP
 * itself. (Not on a Windows named pipe: see `clusterUnsupported`.)
 *
 * 1. Relay. Without Redis, a worker's stored message comes here over IPC and
 *    goes to every other worker (`ClusterBus`), and presence is kept here
 *    (`servePresence`). With Redis the workers talk through Redis instead
 *    and this relay stays idle. On a SQLite file the workers' writes are
 *    committed here, by one writer thread for all of them, and the relay is
 *    part of the commit (`ClusterWriters`, server/store/cluster-writer.ts).
 * 2. Restart. A connection the primary was handing to a worker that dies is
 *    closed (`handoffs.ts`): none waits on a dead worker. A worker that dies is forked again after a delay that doubles
 *    with each death in a row (250 ms, 500 ms, … up to 30 s). A worker that
 *    ran for `stableMs` (30 s) resets the count. A slot whose worker dies
 *    `maxQuickDeaths` (8) times in a row without becoming stable is a
 *    crash loop (a bad database URL, a port in use): it is given up, and
 *    once every slot is given up the primary exits 1 so a supervisor sees it.
 * 3. Graceful stop. On SIGTERM or SIGINT the primary asks every worker to
 *    shut down (each answers its waiting polls with an empty list, so the
 *    clients reconnect elsewhere) and exits once they all have; a worker
 *    still there after `stopTimeoutMs` (10 s) is killed. A second signal (a second
 *    later or more) kills at once.
 * 4. Metrics. Unless `METRICS=off`, it adds up the workers' metrics and
 *    serves them on `METRICS_PORT`, or to the worker asked for `/metrics`.
 *
 * Once every slot's worker has said it listens (server/process/listening.ts),
 * `onListening` is called, once: `main.ts` passes the signal on to the
 * primary's own parent, if it has an IPC channel.
 */
import cluster, { type Worker } from 'node:cluster';
import { setTimeout as delay } from 'node:timers/promises';
import { isChatIpc, sendIpc } from '../bus/cluster-ipc.ts';
import { type Config, defaults } from '../core/config.ts';
import type { Log } from '../core/log.ts';
import { serveClusterMetrics } from '../metrics/cluster-metrics.ts';
import { clientsPerAddress } from '../presence/address-cap.ts';
import { servePresence } from '../presence/cluster-presence.ts';
import { LocalPresence } from '../presence/presence.ts';
import { newTagSecret } from '../presence/tag.ts';
import { ClusterWriters } from '../store/cluster-writer.ts';
import { closeHandoffsOnDeath } from './handoffs.ts';
import { type ChatListening, isChatListening } from './listening.ts';
import { withNodeFlags } from './node-flags.ts';

/** When and how often a dead worker is forked again. */
export interface RestartPolicy {
  /** Delay before the first restart; it doubles with each death in a row. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** A worker that ran this long resets the count of deaths in a row. */
  stableMs: number;
  /** Deaths in a row, each before `stableMs`, at which a slot is given up. */
  maxQuickDeaths: number;
  /** How long a graceful stop may take before the workers are killed. */
  stopTimeoutMs: number;
}

export const defaultRestartPolicy: Readonly<RestartPolicy> = Object.freeze({
  firstDelayMs: 250,
  maxDelayMs: 30_000,
  stableMs: 30_000,
  maxQuickDeaths: 8,
  stopTimeoutMs: 10_000,
});

const ECHO_MS = 1_000;
/** How long the primary's SQLite writer may take to close at the end. */
const WRITER_CLOSE_MS = 6_000;

interface Slot {
  index: number;
  worker: Worker | undefined;
  startedAt: number;
  /** Deaths in a row, each before the worker became stable. */
  quickDeaths: number;
  restartTimer: NodeJS.Timeout | undefined;
  givenUp: boolean;
}

/**
 * Why cluster mode cannot serve `port` here, if it cannot. Node's cluster
 * cannot share a Windows named pipe between workers (its docs: "it is not yet
 * possible to set up a named pipe server in a worker"). Under IIS, let IIS
 * (Helicon Zoo, iisnode) start the processes and connect them with Redis.
 */
export function clusterUnsupported(
  port: Config['port'],
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  if (platform === 'win32' && typeof port === 'string') {
    return 'Node cannot share a named pipe between cluster workers on Windows: running one process (let IIS start several, with REDIS_URL)';
  }
  return undefined;
}

/** How the primary ended: `main.ts` exits with `code`. */
export interface PrimaryOutcome {
  /** 0: stopped as asked; 1: crash loop, or workers killed after a stop timed out or a second signal. */
  code: 0 | 1;
  why: string;
}

/**
 * Runs the primary until it is done; resolves with how it ended, and leaves
 * exiting to the caller (`main.ts`), so tests can run it and read the outcome.
 */
export function runPrimary(
  config: Pick<Config, 'workers' | 'pollTimeoutMs' | 'presenceGraceMs'> &
    Partial<
      Pick<
        Config,
        | 'metrics'
        | 'metricsPort'
        | 'host'
        | 'metricsHost'
        | 'presenceTagSecret'
        | 'presenceClientsPerAddress'
        | 'peopleListedPerAddress'
        | 'relayBatchMs'
      >
    >,
  log: Log,
  policy: Readonly<RestartPolicy> = defaultRestartPolicy,
  onListening: (signal: ChatListening) => void = () => {},
): Promise<PrimaryOutcome> {
  let finish!: (outcome: PrimaryOutcome) => void;
  const done = new Promise<PrimaryOutcome>((resolve) => {
    finish = resolve;
  });
  const windowMs = config.pollTimeoutMs + config.presenceGraceMs;
  const presence = new LocalPresence(
    windowMs,
    Date.now,
    undefined,
    config.peopleListedPerAddress ?? defaults.peopleListedPerAddress,
  );
  const admit = clientsPerAddress(
    config.presenceClientsPerAddress ?? defaults.presenceClientsPerAddress,
    windowMs,
  );
  const slots: Slot[] = Array.from({ length: config.workers }, (_, index) => ({
    index,
    worker: undefined,
    startedAt: 0,
    quickDeaths: 0,
    restartTimer: undefined,
    givenUp: false,
  }));
  const slotOf = new Map<Worker, Slot>();
  const writers = new ClusterWriters({
    relayBatchMs: config.relayBatchMs ?? defaults.relayBatchMs,
  });
  let stopping = false;
  let stopAt = 0;
  /** Each slot's worker that has said it listens, until every one has: then `onListening`, once. */
  let listening: Map<Slot, number[]> | undefined = new Map();

  // The workers name typists by the same tags (server/presence/tag.ts), so a
  // page that polls any of them sees the same ones: with no secret set, the
  // primary makes one for all of them, for its own life.
  const tagEnv =
    config.presenceTagSecret === undefined ? { PRESENCE_TAG_SECRET: newTagSecret() } : {};

  function fork(slot: Slot): void {
    slot.restartTimer = undefined;
    const worker = cluster.fork(tagEnv);
    closeHandoffsOnDeath(worker);
    slot.worker = worker;
    slot.startedAt = Date.now();
    slotOf.set(worker, slot);
    worker.on('message', (raw: unknown) => onWorkerMessage(worker, raw));
  }

  function onWorkerMessage(from: Worker, raw: unknown): void {
    if (isChatListening(raw)) {
      const slot = slotOf.get(from);
      if (!listening || !slot) return;
      listening.set(slot, raw.pids);
      if (listening.size < slots.length) return;
      const pids = [...listening.values()].flat();
      listening = undefined;
      onListening({ ...raw, pids });
      return;
    }
    if (!isChatIpc(raw)) return;
    if (raw.lpchat === 'sqlite') {
      writers.serve(from, raw);
    } else if (raw.lpchat === 'message' || raw.lpchat === 'event') {
      for (const slot of slots) {
        if (slot.worker && slot.worker !== from) sendIpc(slot.worker, raw);
      }
    } else if (raw.lpchat === 'presence') {
      const counts = servePresence(presence, raw, admit);
      sendIpc(from, { lpchat: 'presence-counts', seq: raw.seq, counts });
    }
  }

  function onExit(worker: Worker, code: number | null, signal: string | null): void {
    const slot = slotOf.get(worker);
    slotOf.delete(worker);
    if (!slot || slot.worker !== worker) return;
    slot.worker = undefined;
    listening?.delete(slot);
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (stopping) {
      log('info', `worker ${worker.process.pid} stopped (${how})`);
      if (slots.every((s) => s.worker === undefined)) end(0, 'every worker stopped');
      return;
    }
    const lived = Date.now() - slot.startedAt;
    slot.quickDeaths = lived >= policy.stableMs ? 1 : slot.quickDeaths + 1;
    if (slot.quickDeaths >= policy.maxQuickDeaths) {
      slot.givenUp = true;
      log(
        'error',
        `worker slot ${slot.index} died ${policy.maxQuickDeaths} times in a row: crash loop, not restarting it`,
      );
      if (slots.every((s) => s.givenUp)) {
        log('error', 'every worker is in a crash loop; the primary exits');
        end(1, 'every worker is in a crash loop');
      }
      return;
    }
    const delay = Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** (slot.quickDeaths - 1));
    log(
      'warn',
      `worker ${worker.process.pid} died (${how}) after ${lived} ms; restarting in ${delay} ms`,
    );
    slot.restartTimer = setTimeout(() => fork(slot), delay);
  }

  function stop(signal: NodeJS.Signals): void {
    if (stopping) {
      // The same signal sent to the whole process group (Ctrl-C, `timeout`,
      // systemd) can reach us twice at once: only a later one means "now".
      if (Date.now() - stopAt < ECHO_MS) return;
      log('warn', `${signal} again: killing the workers`);
      killAll();
      end(1, `${signal} again: workers killed`);
      return;
    }
    stopping = true;
    stopAt = Date.now();
    log('info', `${signal}: asking ${slotOf.size} workers to shut down gracefully`);
    for (const slot of slots) clearTimeout(slot.restartTimer);
    if (slotOf.size === 0) {
      end(0, `${signal} with no worker running`);
      return;
    }
    for (const worker of slotOf.keys()) {
      if (!sendIpc(worker, { lpchat: 'shutdown' })) worker.process.kill('SIGTERM');
    }
    setTimeout(() => {
      log('warn', `workers still running after ${policy.stopTimeoutMs} ms: killing them`);
      killAll();
      end(1, `workers killed after ${policy.stopTimeoutMs} ms`);
    }, policy.stopTimeoutMs).unref();
  }

  function killAll(): void {
    for (const worker of slotOf.keys()) worker.process.kill('SIGKILL');
  }

  function end(code: 0 | 1, why: string): void {
    cluster.off('exit', onExit);
    process.off('SIGTERM', onSigterm);
    process.off('SIGINT', onSigint);
    // The writer's file is closed (checkpointed) before the caller exits,
    // unless its disk keeps it from closing.
    const closed = Promise.race([
      writers.close(),
      delay(WRITER_CLOSE_MS, undefined, { ref: false }),
    ]);
    closed.finally(() => finish({ code, why }));
  }

  // The workers hold the polls: they run under the chat's Node flags even
  // when the primary was started without them (server/process/node-flags.ts).
  cluster.setupPrimary({ execArgv: withNodeFlags(cluster.settings.execArgv ?? process.execArgv) });
  const onSigterm = () => stop('SIGTERM');
  const onSigint = () => stop('SIGINT');
  cluster.on('exit', onExit);
  process.on('SIGTERM', onSigterm);
  process.on('SIGINT', onSigint);
  // If the primary itself fails, do not leave orphan workers holding the port.
  process.on('exit', killAll);
  for (const slot of slots) fork(slot);
  log('info', `started ${config.workers} workers (pid ${process.pid})`);

  // 4. Metrics: the sum of every worker's (server/metrics/cluster-metrics.ts).
  if (config.metrics) {
    serveClusterMetrics(
      { metrics: true, metricsPort: config.metricsPort, host: config.metricsHost ?? config.host },
      log,
    ).catch((error: unknown) => log('error', 'metrics: cannot serve them', error));
  }
  return done;
}
