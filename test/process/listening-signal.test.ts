/**
 * The listening signal (server/process/listening.ts): the built chat,
 * started with an IPC channel, sends its parent one `chat:listening`
 * message once it listens, with the port it got from `PORT=0`; under
 * `WORKERS=2` the primary sends it once both workers listen. Started without
 * a channel (a terminal, systemd, Docker, IIS), it starts as before.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../deploy/http.ts';
import { ensureBuilt, MAIN_JS, ROOT } from '../helpers/build.ts';
import { type ChatListening, type Spawned, spawnChat } from '../helpers/launch.ts';

const env = (more: Record<string, string>) => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: process.env.HOME ?? '/tmp',
  PORT: '0',
  HOST: '127.0.0.1',
  DATABASE_URL: 'memory:',
  LOG_LEVEL: 'info',
  SERVE_STATIC: 'false',
  METRICS: 'off',
  ...more,
});

beforeAll(ensureBuilt, 180_000);

let chat: Spawned | undefined;
afterEach(async () => {
  await chat?.stop(15_000, true);
  chat = undefined;
});

/**
 * Starts the chat with a channel; resolves at its first listening signal
 * with the output as it stood then, and keeps every later message in `messages`.
 */
async function started(workers: number) {
  const spawned = spawnChat({
    command: process.execPath,
    args: [MAIN_JS],
    cwd: ROOT,
    env: env({ WORKERS: String(workers) }),
    group: true,
  });
  chat = spawned;
  const messages: unknown[] = [];
  const first = new Promise<{ signal: ChatListening; output: string }>((resolve, reject) => {
    spawned.child.on('message', (message: unknown) => {
      messages.push(message);
      // What the chat logged before it sent the signal: read once what is readable now.
      if (messages.length === 1)
        setImmediate(() => resolve({ signal: message as ChatListening, output: spawned.output() }));
    });
    spawned.exited.then(({ code }) =>
      reject(new Error(`exited (${code}) before its signal:\n${spawned.output()}`)),
    );
  });
  return { ...(await first), messages, pid: spawned.child.pid! };
}

/** Every message the chat has sent after a few more requests and a while. */
async function settled(url: string, messages: unknown[]): Promise<unknown[]> {
  for (let i = 0; i < 4; i += 1) await http(`${url}/time`);
  await sleep(500);
  return messages;
}

describe('the listening signal', () => {
  it('comes once from one process, with the port it listens on', async () => {
    const { signal, messages, pid } = await started(1);
    expect(signal).toMatchObject({ type: 'chat:listening', address: '127.0.0.1', pids: [pid] });
    expect(signal).toHaveProperty('port', expect.any(Number));
    expect(signal.url).toBe(`http://127.0.0.1:${'port' in signal ? signal.port : NaN}`);
    expect((await http(`${signal.url}/time`)).status).toBe(200);
    expect(await settled(signal.url, messages)).toHaveLength(1);
  });

  it('comes once from the cluster primary, after both workers listen', async () => {
    const { signal, output, messages, pid } = await started(2);
    expect(signal).toMatchObject({ type: 'chat:listening', address: '127.0.0.1' });
    expect(signal.pids).toHaveLength(2);
    expect(signal.pids).not.toContain(pid);
    // Each worker had logged that it listens before the primary said so.
    for (const worker of signal.pids) {
      expect(output).toContain(`worker ${worker}: chat listening on ${signal.url}`);
    }
    expect((await http(`${signal.url}/time`)).status).toBe(200);
    expect(await settled(signal.url, messages)).toHaveLength(1);
  });
});

describe('without an IPC channel', () => {
  it('starts, serves and stops as before', async () => {
    const child = spawn(process.execPath, [MAIN_JS], {
      cwd: ROOT,
      env: env({ WORKERS: '1' }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = once(child, 'exit');
    try {
      let output = '';
      child.stderr.setEncoding('utf8');
      // No signal to wait for: the log line is what a person (or systemd) sees.
      const url = await new Promise<string>((resolve, reject) => {
        child.stderr.on('data', (chunk: string) => {
          output += chunk;
          const listening = /chat listening on (\S+)/.exec(output);
          if (listening) resolve(listening[1]!);
        });
        exited.then(() => reject(new Error(`exited before listening:\n${output}`)));
      });
      expect((await http(`${url}/time`)).status).toBe(200);
      child.kill('SIGTERM');
      expect(await exited).toEqual([0, null]);
      expect(output).not.toMatch(/error|Cannot/i);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
