/**
 * The one launcher of chat processes, for the tests, the browser suite and
 * the bench: spawns the command with an IPC channel and resolves with the
 * chat's listening signal (server/process/listening.ts), the port it got
 * from `PORT=0` or its socket path; the log is only collected, never read
 * for it. It rejects with the process's output when the process exits first
 * or the deadline passes, and kills what it started.
 *
 * A command that does not pass the channel on to the chat (`npm start`: npm
 * runs its script with stdin, stdout and stderr only) says nothing on it:
 * give `probe`, a URL on a port chosen beforehand, and the chat is ready
 * when its `/health` answers there.
 *
 * With `group`, the process runs in its own process group: `kill()` takes a
 * primary and its workers (or `npm` and the chat under it) down together.
 * Every process started here is killed when this process exits, even if a
 * caller forgot to: nothing outlives its test.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ChatListening, isChatListening } from '../../server/process/listening.ts';

export type { ChatListening };

export interface LaunchSpec {
  command: string;
  args: string[];
  cwd?: string;
  /** The whole environment: nothing is inherited but what is passed. */
  env: NodeJS.ProcessEnv;
  /** Its own process group (`detached`), killed as one. @default false */
  group?: boolean;
  /** Collect stdout as well as stderr. @default true */
  stdout?: boolean;
  /** How long it may take to listen. @default 30000 */
  deadlineMs?: number;
  /** For a command that passes no IPC channel on: ready when `${probe}/health` answers. */
  probe?: string;
  /** Each whole line of output, as it comes (stdout's and stderr's). */
  onLine?: (line: string) => void;
}

/** A process started here and not yet waited on: `launchChat` waits for it to listen, `runToExit` for its end. */
export interface Spawned {
  child: ChildProcess;
  /** stdout and stderr so far, interleaved as they came. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Whether the process has exited. */
  readonly gone: boolean;
  /** Sends a signal to the process, or to its group with `group`. */
  kill(signal: NodeJS.Signals): void;
  /**
   * SIGTERM to the process (to its group with `wholeGroup`), then waits for
   * the exit; SIGKILL (to the group with `group`) after `timeoutMs`.
   */
  stop(timeoutMs?: number, wholeGroup?: boolean): Promise<void>;
}

export interface Launched extends Spawned {
  /** The listening signal (under `probe`, one made from the probe URL). */
  listening: ChatListening;
}

const running = new Set<Spawned>();
process.once('exit', () => {
  for (const spawned of running) spawned.kill('SIGKILL');
});

/** Starts the process with an IPC channel, collecting its output; does not wait for anything. */
export function spawnChat(spec: Omit<LaunchSpec, 'deadlineMs' | 'probe'>): Spawned {
  const child = spawn(spec.command, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    detached: spec.group ?? false,
    stdio: ['ignore', spec.stdout === false ? 'ignore' : 'pipe', 'pipe', 'ipc'],
  });
  const kill = (signal: NodeJS.Signals) => {
    try {
      if (spec.group && child.pid !== undefined) process.kill(-child.pid, signal);
      else child.kill(signal);
    } catch {
      // Already gone.
    }
  };
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  let output = '';
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      output += chunk;
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) spec.onLine?.(line);
    });
  }
  const spawned: Spawned = {
    child,
    output: () => output,
    exited: once(child, 'exit').then(([code, signal]) => {
      running.delete(spawned);
      return { code: code as number | null, signal: signal as NodeJS.Signals | null };
    }),
    get gone() {
      return gone();
    },
    kill,
    async stop(timeoutMs = 15_000, wholeGroup = false) {
      if (gone()) return;
      if (wholeGroup) kill('SIGTERM');
      else child.kill('SIGTERM');
      const timer = setTimeout(() => kill('SIGKILL'), timeoutMs);
      await spawned.exited;
      clearTimeout(timer);
    },
  };
  running.add(spawned);
  return spawned;
}

/** Starts the process; resolves once it listens. */
export async function launchChat(spec: LaunchSpec): Promise<Launched> {
  const spawned = spawnChat(spec);
  const deadlineMs = spec.deadlineMs ?? 30_000;
  const failed = new AbortController();
  const listening = new Promise<ChatListening>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${spec.command} did not listen within ${deadlineMs} ms`)),
      deadlineMs,
    );
    timer.unref();
    spawned.exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`${spec.command} exited (${signal ?? code}) before listening`));
    });
    if (spec.probe !== undefined) {
      healthAnswers(spec.probe, failed.signal).then((answered) => {
        clearTimeout(timer);
        if (answered) resolve(probed(spec.probe!));
      });
      return;
    }
    spawned.child.on('message', (raw: unknown) => {
      if (!isChatListening(raw)) return;
      clearTimeout(timer);
      // The log line went out before the signal, on another pipe: let what
      // is already readable there be read first, for callers that look at it.
      setImmediate(() => resolve(raw));
    });
  });
  try {
    // Not a spread: `gone` is a getter.
    return Object.assign(spawned, { listening: await listening });
  } catch (error) {
    failed.abort();
    spawned.kill('SIGKILL');
    throw new Error(`${(error as Error).message}:\n${spawned.output()}`);
  }
}

/** Kills every process still running (for `afterAll`) and waits for their exits. */
export async function killAllLaunched(): Promise<void> {
  await Promise.all(
    [...running].map(async ({ child, kill }) => {
      kill('SIGKILL');
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
    }),
  );
}

/** Asks `${base}/health` until it answers at all (true), or `stop` aborts (false). */
async function healthAnswers(base: string, stop: AbortSignal): Promise<boolean> {
  while (!stop.aborted) {
    const answered = await new Promise<boolean>((resolve) => {
      const req = request(`${base}/health`, { agent: false }, (res) => {
        res.resume();
        resolve(true);
      });
      req.on('error', () => resolve(false));
      req.end();
    });
    if (answered) return true;
    await sleep(100);
  }
  return false;
}

function probed(url: string): ChatListening {
  const { hostname, port } = new URL(url);
  return { type: 'chat:listening', url, port: Number(port), address: hostname, pids: [] };
}
