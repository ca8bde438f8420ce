/**
 * Real server processes for the scale-out tests: the built chat
 * (`node dist/server/main.js`, as production runs it; build.ts keeps the
 * build fresh), one process or a cluster primary with its workers, on
 * 127.0.0.1. The build, not the sources under tsx: tsx would compile or load
 * its cache again at the start of every process and every cluster worker.
 *
 * A process is ready when it sends its listening signal (the one process,
 * or the primary once every worker listens: test/helpers/launch.ts); the
 * URL, the port and the workers' pids come from it, so `PORT=0` works
 * (cluster workers share the one port the primary picked).
 *
 * Each process runs in its own process group, so `kill()` takes a primary
 * and its workers down together. Every process started here is killed when
 * the test process exits, even if a test forgot to: nothing outlives its test.
 */
import { fileURLToPath } from 'node:url';
import { ensureBuilt, MAIN_JS } from './build.ts';
import { killAllLaunched, launchChat } from './launch.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

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
  /** Pids of the workers that listened at the start (the process itself when there is one). */
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
  const listeners = new Set<(line: string) => void>();
  const launched = await launchChat({
    command,
    args: argv,
    cwd: root,
    env,
    group: true,
    stdout: false,
    deadlineMs: options.startTimeoutMs,
    onLine: (line) => {
      for (const listener of [...listeners]) listener(line);
    },
  });
  const { listening, output, exited } = launched;

  function nextLine(pattern: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        listeners.delete(onLine);
        reject(
          new Error(`No line matching ${pattern} within ${timeoutMs} ms. Output:\n${output()}`),
        );
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

  return {
    url: listening.url,
    port: 'port' in listening ? listening.port : undefined,
    pid: launched.child.pid!,
    listeningPids: listening.pids,
    get output() {
      return output();
    },
    exited,
    nextLine,
    signal: (signal) => launched.child.kill(signal),
    stop: launched.stop,
    async kill() {
      if (launched.gone) return;
      launched.kill('SIGKILL');
      await exited;
    },
  };
}

/** Stops every process still running (for `afterAll`). */
export const stopAllServerProcesses: () => Promise<void> = killAllLaunched;
