/**
 * The servers under test: the chat as built (`dist/server/main.js`) and the
 * baselines. Each starts on a free port, is ready once `GET /time` answers,
 * and stops with SIGTERM (then SIGKILL after 5 s).
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from '../../test/helpers/free-port.ts';
import type { Target } from '../load/generator.ts';
import { cpuSeconds, mainThreadCpuSeconds, openFileLimit, rssBytes } from './proc.ts';
import { nodeWithTsx, spawnWithFileLimit } from './spawn.ts';

export interface ServerSpec {
  /** Short id used in the results: `chat`, `bare-http`, `naive`… */
  name: string;
  label: string;
  argv: string[];
  env?: Record<string, string>;
  cursors: boolean;
  readyPath: string;
  processes: number;
}

export interface RunningServer {
  spec: ServerSpec;
  pid: number;
  port: number;
  target: Target;
  fileLimit: number;
  cpuSeconds(): number;
  /** CPU seconds of the servers' main (JavaScript) threads only. */
  mainThreadCpuSeconds(): number;
  rssBytes(): number;
  /** How many processes the server runs (1 + cluster workers). */
  processCount(): Promise<number>;
  /** Runs a full GC in the server (its bench-only `/bench/gc` route) and returns its JS heap in use, in bytes. */
  collectGarbage(): Promise<number>;
  stop(): Promise<void>;
}

export interface ChatOptions {
  databaseUrl: string;
  workers?: number;
  pollTimeoutMs?: number;
}

/** Every server under test gets the bench-only routes (`/burn`, `/bench/gc`), so they compare fairly. */
const benchNode = ['node', '--expose-gc', '--import', './bench/servers/bench-routes.mjs'];
const benchNodeWithTsx = [...benchNode, ...nodeWithTsx.slice(1)];

export function chatSpec(name: string, label: string, options: ChatOptions): ServerSpec {
  const workers = options.workers ?? 1;
  return {
    name,
    label,
    argv: [...benchNode, 'dist/server/main.js'],
    env: {
      DATABASE_URL: options.databaseUrl,
      SEND_RATE: '0',
      SEND_KB_PER_HOUR: '0',
      HISTORY_RATE: '0',
      // Every bench client comes from 127.0.0.1: the per-address poll limit
      // (100 by default) would refuse all but 100 of T5's polls. Above every
      // N here, the chat never counts addresses (it starts at this many
      // waiting polls, server/hub/address-count.ts): a chat at the default with
      // more polls than that also reads each new connection's address once
      // (getpeername: 6% of the chat's busy time in a profile of T5 at
      // N=10,000, when every poll read it).
      MAX_POLLS_PER_ADDRESS: '1000000',
      // Likewise the per-address caps of connections and online ids
      // (server/net/connection-limit.ts, server/presence/address-cap.ts).
      MAX_CONNECTIONS_PER_ADDRESS: '0',
      MAX_IDLE_PER_ADDRESS: '0',
      PRESENCE_CLIENTS_PER_ADDRESS: '0',
      LOG_LEVEL: 'warn',
      POLL_TIMEOUT_MS: String(options.pollTimeoutMs ?? 60_000),
      SERVE_STATIC: 'false',
      WORKERS: String(workers),
      BENCH_COUNT_POLLS: '1',
    },
    cursors: true,
    // The polls each worker holds (bench/servers/bench-routes.mjs).
    readyPath: '/bench/stats',
    processes: workers,
  };
}

/** The baseline every T6 result is a ratio to (`bench/servers/bare-http.ts`). */
export const bareHttpSpec: ServerSpec = {
  name: 'bare-http',
  label: 'in-memory node:http (baseline)',
  argv: [...benchNodeWithTsx, 'bench/servers/bare-http.ts'],
  cursors: true,
  readyPath: '/stats',
  processes: 1,
};

export const bareExpressSpec: ServerSpec = {
  name: 'bare-express',
  label: 'bare Express',
  argv: [...benchNodeWithTsx, 'bench/servers/bare-express.ts'],
  cursors: true,
  readyPath: '/stats',
  processes: 1,
};

export const naiveSpec: ServerSpec = {
  name: 'naive',
  label: 'naive 2011 chat',
  argv: [...benchNodeWithTsx, 'examples/naive/server.ts'],
  cursors: false,
  readyPath: '/stats',
  processes: 1,
};

export async function startServer(
  spec: ServerSpec,
  startTimeoutMs = 15_000,
): Promise<RunningServer> {
  const port = await freePort();
  // The bus is part of what is measured: a REDIS_URL in the shell (CI
  // exports one for the test suites) would put every chat under test on
  // Redis pub/sub, unannounced, instead of one process or the cluster's IPC.
  const inherited = { ...process.env };
  delete inherited.REDIS_URL;
  const child = spawnWithFileLimit(spec.argv, {
    env: { ...inherited, ...spec.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = once(child, 'exit').then(([code, signal]) => {
    throw new Error(`${spec.label} exited (${code ?? signal}) before it was ready:\n${stderr}`);
  });
  exited.catch(() => {});
  await Promise.race([ready(port, startTimeoutMs), exited]);
  const pid = child.pid!;
  return {
    spec,
    pid,
    port,
    target: { port, cursors: spec.cursors, readyPath: spec.readyPath, processes: spec.processes },
    fileLimit: openFileLimit(pid),
    cpuSeconds: () => cpuSeconds(pid),
    mainThreadCpuSeconds: () => mainThreadCpuSeconds(pid),
    rssBytes: () => rssBytes(pid),
    processCount: async () => (await import('./proc.ts')).processTree(pid).length,
    collectGarbage: async () => {
      const res = await fetch(`http://127.0.0.1:${port}/bench/gc`);
      return ((await res.json()) as { heapUsed: number }).heapUsed;
    },
    stop: () => stop(child),
  };
}

async function ready(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/time`);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`no answer on port ${port} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(kill);
}
