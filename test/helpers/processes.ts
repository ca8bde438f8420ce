/**
 * Real server processes for the scale-out tests: the built chat
 * (`node dist/server/main.js`, as production runs it; build.ts keeps the
 * build fresh), one process or a cluster primary with its workers, on
 * 127.0.0.1. The build, not the sources under tsx: tsx would compile or load
 * its cache again at the start of every process and every cluster worker.
 *
 * A process is ready when it (or each of its workers) logs its
 * "chat listening on URL" line; the URL is read from that line, so `PORT=0`
 * works (cluster workers share the one port the primary picked).
 *
 * Each process runs in its own process group, so `kill()` takes a primary
 * and its workers down together. Every process started here is killed when
 * the test process exits, even if a test forgot to: nothing outlives its test.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { ensureBuilt, MAIN_JS } from './build.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const LISTENING = /(?:worker (\d+): )?chat listening on (\S+)/;

export interface ServerProcessOptions {
  /** DATABASE_URL, REDIS_URL, REDIS_PREFIX, POLL_TIMEOUT_MS, … on top of the test defaults. */
  env?: Record<string, string>;
  /** `WORKERS`. @default 1 */
  workers?: number;
  /** A fixed port (to restart a process where it was), or a socket path. @default 0 */
  port?: number | string;
  /** How long to wait for every worker to listen. @default 30000 */
  startTimeoutMs?: number;
  /** Runs it under `ulimit -n` this (descriptors it may open). @default the test's own */
  descriptorLimit?: number;
}

export interface ServerProcess {
  /** `http://127.0.0.1:PORT`, or the socket path when `PORT` is one. */
  readonly url: string;
  /** The TCP port; undefined on a socket path. */
  readonly port: number | undefined;
  /** The process started: the primary in cluster mode. */
  readonly pid: number;
  /** Pids of the workers that have logged "listening" so far (the process itself when there is one). */
  readonly listeningPids: number[];
  /** Everything it wrote to stderr. */
  readonly output: string;
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves at the next line of output that matches. */
  nextLine(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Sends a signal to the process itself (the primary in cluster mode). */
  signal(signal: NodeJS.Signals): void;
  /** SIGTERM, and waits for the exit (SIGKILL after `timeoutMs`). */
  stop(timeoutMs?: number): Promise<void>;
  /** SIGKILL to the whole process group, and waits for the exit. */
  kill(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) killGroup(child, 'SIGKILL');
});

export async function startServerProcess(
  options: ServerProcessOptions = {},
): Promise<ServerProcess> {
  const workers = options.workers ?? 1;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: String(options.port ?? 0),
    WORKERS: String(workers),
    LOG_LEVEL: 'info',
    SERVE_STATIC: 'false',
    SEND_RATE: '0',
    SEND_KB_PER_HOUR: '0',
    HISTORY_RATE: '0',
    ...options.env,
  };
  await ensureBuilt();
  const args = [MAIN_JS];
  const [command, argv] =
    options.descriptorLimit === undefined
      ? [process.execPath, args]
      : [
          '/bin/sh',
          [
            '-c',
            `ulimit -n ${options.descriptorLimit} && exec "$0" "$@"`,
            process.execPath,
            ...args,
          ],
        ];
  const child = spawn(command, argv, {
    cwd: root,
    env,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  running.add(child);
  const exited = once(child, 'exit').then(([code, signal]) => {
    running.delete(child);
    return { code: code as number | null, signal: signal as NodeJS.Signals | null };
  });

  let output = '';
  let partial = '';
  const listeners = new Set<(line: string) => void>();
  const listeningPids: number[] = [];
  let url = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    output += chunk;
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const listening = LISTENING.exec(line);
      if (listening) {
        url = listening[2]!;
        listeningPids.push(Number(listening[1] ?? child.pid));
      }
      for (const listener of [...listeners]) listener(line);
    }
  });

  function nextLine(pattern: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        listeners.delete(onLine);
        reject(new Error(`No line matching ${pattern} within ${timeoutMs} ms. Output:\n${output}`));
      }, timeoutMs);
      timer.unref();
      function onLine(line: string): void {
        const match = pattern.exec(line);
        if (!match) return;
        clearTimeout(timer);
        listeners.delete(onLine);
        resolve(match);
      }
      listeners.add(onLine);
    });
  }

  const ready = (async () => {
    while (listeningPids.length < workers) await nextLine(LISTENING, options.startTimeoutMs);
  })();
  const died = exited.then(({ code, signal }) => {
    throw new Error(`server exited (${signal ?? code}) before listening:\n${output}`);
  });
  // Whichever loses the race settles later, unobserved: exiting after
  // listening is the test's business, and a wait cut short by an exit is moot.
  died.catch(() => {});
  ready.catch(() => {});
  try {
    await Promise.race([ready, died]);
  } catch (error) {
    killGroup(child, 'SIGKILL');
    throw error;
  }

  return {
    url,
    port: url.startsWith('http') ? Number(new URL(url).port) : undefined,
    pid: child.pid!,
    listeningPids,
    get output() {
      return output;
    },
    exited,
    nextLine,
    signal: (signal) => child.kill(signal),
    async stop(timeoutMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), timeoutMs);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      killGroup(child, 'SIGKILL');
      await exited;
    },
  };
}

/** Stops every process still running (for `afterAll`). */
export async function stopAllServerProcesses(): Promise<void> {
  await Promise.all(
    [...running].map(async (child) => {
      killGroup(child, 'SIGKILL');
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
    }),
  );
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // Already gone.
  }
}
