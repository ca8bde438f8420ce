/**
 * An example server (`examples/<name>/server.ts`) as a real process, the way
 * `npm run example:<name>` starts it: ready once it prints its URL, so
 * `PORT=0` works. Every process started here is killed when the test process
 * exits, even if a test forgot to.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface ExampleProcess {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export interface Exited {
  code: number | null;
  output: string;
}

function start(name: string, env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', `examples/${name}/server.ts`], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let output = '';
  const listen = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout!.on('data', listen);
  child.stderr!.on('data', listen);
  return { child, output: () => output };
}

/** Starts the example on `port` (a free one by default) and resolves once it listens. */
export async function startExample(
  name: 'naive' | 'fixed',
  env: Record<string, string> = {},
): Promise<ExampleProcess> {
  const { child, output } = start(name, { PORT: '0', ...env });
  const url = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      const match = / on (http:\/\/127\.0\.0\.1:\d+)/.exec(output());
      if (match) resolve(match[1]!);
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}:\n${output()}`)));
  });
  return {
    url,
    port: Number(new URL(url).port),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Starts the example and waits for it to exit by itself (e.g. on a busy port). */
export async function runToExit(
  name: 'naive' | 'fixed',
  env: Record<string, string>,
): Promise<Exited> {
  const { child, output } = start(name, env);
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output: output() };
}

/** A `GET` that resolves with the JSON answer and how long it took. */
export async function timedJson(
  url: string,
  signal?: AbortSignal,
): Promise<{ body: unknown; ms: number }> {
  const started = performance.now();
  const res = await fetch(url, signal ? { signal } : {});
  const body: unknown = await res.json();
  return { body, ms: performance.now() - started };
}

/** `POST /send` as the 2011 page does: a form. */
export async function sendForm(base: string, fields: Record<string, string>): Promise<unknown> {
  const res = await fetch(`${base}/send`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });
  return res.json();
}
