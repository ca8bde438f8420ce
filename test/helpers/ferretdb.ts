/**
 * A FerretDB of the test's own (`FERRETDB_BIN`, which scripts/services.sh
 * builds and exports), on a free loopback port, with its SQLite files in a
 * temporary folder: a MongoDB-protocol server that a test may stop, start
 * again on the same port, or freeze with SIGSTOP without disturbing the
 * shared one on 27017.
 *
 * The folder is on /dev/shm when there is one: FerretDB commits every write
 * to SQLite one at a time, and on this machine's disk the fsyncs, not the
 * chat, would set the pace.
 *
 * Ready means FerretDB logged "Listening on TCP …" (it logs at info level
 * here for that line). Every process started here is killed when the test
 * process exits.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';
import type { Need } from './needs.ts';
import { until } from './wait.ts';

const LISTENING = /Listening on TCP (\S+?)\.\.\./;

/** `FERRETDB_BIN`: required in CI (`.ci/run` runs scripts/services.sh), skipped without it elsewhere. */
export function ferretdbNeed(): Need {
  return {
    what: 'FERRETDB_BIN (the FerretDB binary; eval "$(bash scripts/services.sh)" exports it)',
    available: Boolean(process.env.FERRETDB_BIN?.trim()),
    requiredInCi: true,
  };
}

export interface FerretDb {
  /** `mongodb://127.0.0.1:PORT/` (no database: callers name theirs). */
  readonly url: string;
  readonly port: number;
  /** The running process's pid (changes after `start()`). */
  readonly pid: number | undefined;
  /** Everything the current process wrote. */
  readonly output: string;
  /** Starts it again on the same port and folder (after `stop`), and waits until it listens. */
  start(): Promise<void>;
  /** SIGTERM, and waits for the exit. The data stays. */
  stop(): Promise<void>;
  /**
   * SIGSTOP: the process holds its port and connections but answers
   * nothing. Resolves once the kernel shows every thread of it stopped
   * (each `/proc/PID/task/ID/stat`, state `T`): `kill` only queues the signal.
   */
  freeze(): Promise<void>;
  /** SIGCONT after `freeze`. */
  thaw(): void;
  /** Kills it and removes its folder. */
  close(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startFerretDb(): Promise<FerretDb> {
  const bin = process.env.FERRETDB_BIN?.trim();
  if (!bin) throw new Error('FERRETDB_BIN is not set (eval "$(bash scripts/services.sh)")');
  const dir = await mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'lpc-ferretdb-'));
  await mkdir(join(dir, 'data'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';

  const start = async () => {
    output = '';
    const proc = spawn(
      bin,
      [
        '--handler=sqlite',
        `--sqlite-url=file:${dir}/data/`,
        `--listen-addr=127.0.0.1:${port}`,
        `--state-dir=${dir}`,
        '--debug-addr=-',
        '--telemetry=disable',
        '--log-level=info',
      ],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = proc;
    running.add(proc);
    proc.once('exit', () => running.delete(proc));
    const listening = new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (LISTENING.test(output)) resolve();
      };
      proc.stdout?.on('data', onData);
      proc.stderr?.on('data', onData);
      proc.once('exit', (code, signal) =>
        reject(new Error(`FerretDB exited (${signal ?? code}) before listening:\n${output}`)),
      );
    });
    await listening;
  };

  const stop = async () => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = once(proc, 'exit');
    proc.kill('SIGCONT'); // a frozen process would not act on SIGTERM
    proc.kill('SIGTERM');
    await exited;
  };

  await start();
  return {
    url: `mongodb://127.0.0.1:${port}/`,
    port,
    get pid() {
      return child?.pid;
    },
    get output() {
      return output;
    },
    start,
    stop,
    async freeze() {
      const proc = child;
      if (!proc?.pid || !proc.kill('SIGSTOP')) throw new Error('FerretDB is not running');
      const tasks = `/proc/${proc.pid}/task`;
      if (!existsSync(tasks)) return; // No procfs: the signal's queueing is all we can see.
      // Every thread stopped; a thread's state is the field after its name's closing parenthesis.
      const stopped = async () => {
        const states = await Promise.all(
          (await readdir(tasks)).map((id) => readFile(join(tasks, id, 'stat'), 'utf8')),
        );
        return states.every((stat) => /\) [Tt] /.test(stat));
      };
      await until(stopped, 'every FerretDB thread to show as stopped', 5_000, 5);
    },
    thaw: () => child?.kill('SIGCONT'),
    async close() {
      const proc = child;
      if (proc && proc.exitCode === null && proc.signalCode === null) {
        const exited = once(proc, 'exit');
        proc.kill('SIGKILL');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
