/**
 * What the built chat (`node dist/server/main.js`) says when it cannot start,
 * and what it says when it can: a start-up mistake is one line that says what
 * to do (its stack only at LOG_LEVEL=debug), and the listening line gives the
 * real bind address beside a URL a client can connect to.
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { baseEnv, type ChatProcess, runToExit, startChatProcess } from '../deploy/chat-process.ts';
import { ensureBuilt, MAIN_JS, ROOT } from '../helpers/build.ts';
import { serviceUrl } from '../helpers/env.ts';
import { freePort as closedPort } from '../helpers/free-port.ts';
import { describeWith, needs } from '../helpers/needs.ts';

const chat = (env: Record<string, string>) => ({
  command: process.execPath,
  args: [MAIN_JS],
  cwd: ROOT,
  env: { ...baseEnv(), DATABASE_URL: 'memory:', LOG_LEVEL: 'info', ...env },
});

/** The lines a failed start printed, once it has exited with 1. */
async function failedStart(env: Record<string, string>): Promise<string[]> {
  const { code, output } = await runToExit(chat(env));
  expect(code, output).toBe(1);
  return output.trimEnd().split('\n');
}

const STACK_LINE = /^\s+at /m;

beforeAll(ensureBuilt, 180_000);

let running: ChatProcess | undefined;
let holder: Server | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
  holder?.close();
  holder = undefined;
});

describe('a start-up mistake', () => {
  describe('when PORT is neither a number nor a path', () => {
    it('is refused in the list of bad settings, not taken as a socket file', async () => {
      const lines = await failedStart({ PORT: 'abc' });
      expect(lines.join('\n')).toMatch(/^Invalid configuration:\n {2}- PORT must be .*got "abc"$/);
    });
  });

  describe('when the port is in use', () => {
    async function busyPort(): Promise<number> {
      holder = createServer().listen(0);
      await once(holder, 'listening');
      return (holder.address() as { port: number }).port;
    }

    it('says so in one line, and how to fix it', async () => {
      const port = await busyPort();
      expect(await failedStart({ PORT: String(port) })).toEqual([
        `Cannot start the chat: port ${port} is in use: stop what listens there, or set PORT to another port`,
      ]);
    });

    it('adds the stack at LOG_LEVEL=debug', async () => {
      const port = await busyPort();
      const lines = await failedStart({ PORT: String(port), LOG_LEVEL: 'debug' });
      expect(lines[0]).toBe(
        `Cannot start the chat: port ${port} is in use: stop what listens there, or set PORT to another port`,
      );
      expect(lines.slice(1).join('\n')).toMatch(STACK_LINE);
    });
  });

  describe('when MongoDB cannot be reached', () => {
    it('says which server, and what to do, in one line', async () => {
      const port = await closedPort();
      const lines = await failedStart({
        PORT: '0',
        DATABASE_URL: `mongodb://chat:secret@127.0.0.1:${port}/chat?authSource=admin`,
      });
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^Cannot start the chat: cannot reach MongoDB at 127\\.0\\.0\\.1:${port} \\(.+\\): start it, or fix DATABASE_URL$`,
        ),
      );
      expect(lines[0]).not.toContain('secret');
    });
  });
});

describeWith(needs.service('MYSQL_URL'), 'a MySQL database that does not exist', () => {
  it('is one line that says to create it', async () => {
    const url = new URL(serviceUrl('MYSQL_URL')!);
    url.pathname = '/lpchat_no_such_database';
    const lines = await failedStart({ PORT: '0', DATABASE_URL: url.href });
    expect(lines).toEqual([
      `Cannot start the chat: MySQL at ${url.host} has no database "lpchat_no_such_database": create it (CREATE DATABASE \`lpchat_no_such_database\`) or fix DATABASE_URL`,
    ]);
  });
});

describe('the listening line', () => {
  it('gives the bind address of every interface beside a URL that connects', async () => {
    running = await startChatProcess(chat({ PORT: '0' }));
    const url = new URL(running.url);
    expect(url.hostname).toBe('127.0.0.1');
    expect(running.output()).toMatch(
      new RegExp(
        `chat listening on ${url.origin} \\(bound to (?:\\[::\\]|0\\.0\\.0\\.0):${url.port}, every interface; store memory`,
      ),
    );
    expect((await fetch(new URL('/health', url))).status).toBe(200);
  });

  it('gives the one interface HOST names', async () => {
    running = await startChatProcess(chat({ PORT: '0', HOST: '127.0.0.1' }));
    const url = new URL(running.url);
    expect(running.output()).toContain(
      `chat listening on ${url.origin} (bound to 127.0.0.1:${url.port}; store memory`,
    );
  });
});

describe('the cluster primary', () => {
  it('names itself once in each line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lpchat-start-up-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    running = await startChatProcess(
      chat({ PORT: '0', WORKERS: '2', DATABASE_URL: `sqlite:${join(dir, 'chat.sqlite')}` }),
    );
    await running.stop();
    const primary = running
      .output()
      .split('\n')
      .flatMap((line) => {
        const msg = /"msg":"(primary: [^"]*)"/.exec(line)?.[1];
        return msg === undefined ? [] : [msg];
      });
    expect(primary).toContainEqual(
      expect.stringMatching(/^primary: started 2 workers \(pid \d+\)$/),
    );
    expect(primary.length).toBeGreaterThan(1);
    for (const msg of primary) expect(msg).not.toMatch(/^primary: primary\b/);
  });
});
