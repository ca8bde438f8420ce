/**
 * The built chat as a deployment starts it: a child process (`npm start`,
 * `node dist/server/main.js`, iisnode's `require()` of its entry, the Docker
 * entrypoint) configured only by its environment. Ready when it sends its
 * listening signal (test/helpers/launch.ts), with its URL or socket path;
 * `npm start`, which passes no IPC channel on, is ready when `/health`
 * answers on the port it was given (`probe`).
 *
 * Each process runs in its own process group, so stopping `npm start` stops
 * the chat under it too, and every group still running when the test
 * process exits is killed: nothing outlives its test.
 */
import { launchChat, spawnChat } from '../helpers/launch.ts';

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
  /** For a command that passes no IPC channel on (`npm start`): the URL it will serve. */
  probe?: string;
}

/** What a child needs from this machine to run Node and npm, and nothing else. */
export function baseEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
  };
}

/** Starts the process; resolves when it listens, rejects (with its output) if it exits first. */
export async function startChatProcess(spec: Launch): Promise<ChatProcess> {
  // No deadline of its own but the test's: `npm start` on a fresh clone builds first.
  const launched = await launchChat({ ...spec, group: true, deadlineMs: 600_000 });
  return {
    url: launched.listening.url,
    output: launched.output,
    stop: () => launched.stop(15_000, true),
  };
}

/** Runs the process to its end (for starts that must fail): its exit code and output. */
export async function runToExit(spec: Launch): Promise<{ code: number | null; output: string }> {
  const spawned = spawnChat({ ...spec, group: true });
  const { code } = await spawned.exited;
  return { code, output: spawned.output() };
}
