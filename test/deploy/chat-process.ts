/**
 * The built chat as a deployment starts it: a child process (`npm start`,
 * `node dist/server/main.js`, iisnode's `require()` of its entry, the Docker
 * entrypoint) configured only by its environment. Ready when it logs
 * "chat listening on <url>"; the URL (or socket path) is read from that line.
 *
 * Each process runs in its own process group, so stopping `npm start` stops
 * the chat under it too, and every group still running when the test
 * process exits is killed: nothing outlives its test.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

const LISTENING = /chat listening on (\S+)/;

export interface ChatProcess {
  /** `http://127.0.0.1:PORT`, or the socket path. */
  readonly url: string;
  /** stdout and stderr so far, interleaved as they came. */
  output(): string;
  /** SIGTERM to the group, then waits for the exit (SIGKILL after 15 s). */
  stop(): Promise<void>;
}

export interface Launch {
  command: string;
  args: string[];
  cwd: string;
  /** The whole environment: nothing is inherited but what is passed. */
  env: Record<string, string>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) killGroup(child, 'SIGKILL');
});

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/** What a child needs from this machine to run Node and npm, and nothing else. */
export function baseEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
  };
}

function launch({ command, args, cwd, env }: Launch) {
  const child = spawn(command, args, {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = once(child, 'exit').then(([code, signal]) => {
    running.delete(child);
    return { code: code as number | null, signal: signal as NodeJS.Signals | null };
  });
  return { child, exited, output: () => output };
}

/** Starts the process; resolves when it listens, rejects (with its output) if it exits first. */
export async function startChatProcess(spec: Launch): Promise<ChatProcess> {
  const { child, exited, output } = launch(spec);
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const match = LISTENING.exec(output());
      if (!match) return;
      child.stdout?.off('data', check);
      child.stderr?.off('data', check);
      resolve(match[1]!);
    };
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    exited.then(({ code, signal }) =>
      reject(
        new Error(`${spec.command} exited (${signal ?? code}) before listening:\n${output()}`),
      ),
    );
  });
  return {
    url,
    output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      killGroup(child, 'SIGTERM');
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Runs the process to its end (for starts that must fail): its exit code and output. */
export async function runToExit(spec: Launch): Promise<{ code: number | null; output: string }> {
  const { exited, output } = launch(spec);
  const { code } = await exited;
  return { code, output: output() };
}
