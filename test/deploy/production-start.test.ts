/**
 * `npm start` as users run it, in a copy of the project:
 * - a fresh clone (the tracked files, dependencies installed, nothing built):
 *   it builds first, saying so, then serves;
 * - a production copy (dev dependencies pruned with `npm prune --omit=dev`,
 *   no `client/` sources): it serves the build it has and never calls Vite.
 *
 * The copy's node_modules is hard-linked to this checkout's (`cp -al`, a
 * second or two instead of copying 400 MB); npm's own index file, which
 * `npm prune` rewrites in place, is copied for real so the checkout's stays
 * untouched. Pruning only unlinks files, so the checkout keeps its own.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rename, rm, rmdir, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HistoryAnswer, SendAnswer } from '../../protocol/protocol.ts';
import { ROOT } from '../helpers/build.ts';
import { freePort } from '../helpers/free-port.ts';
import { baseEnv, type ChatProcess, runToExit, startChatProcess } from './chat-process.ts';
import { http, postJson } from './http.ts';

const run = promisify(execFile);
/** Builds and prunes on two shared cores: far slower than on a laptop. */
const SLOW = 180_000;

let copy: string;

/** The working tree's files as a clone has them: tracked and new, never ignored (no dist/, no public build). */
async function cloneInto(dir: string): Promise<void> {
  const files = execFileSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    {
      cwd: ROOT,
      encoding: 'utf8',
    },
  )
    .split('\0')
    .filter((file) => file !== '' && existsSync(join(ROOT, file)));
  for (const file of files) {
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await copyFile(join(ROOT, file), join(dir, file));
  }
  await run('cp', ['-al', join(ROOT, 'node_modules'), join(dir, 'node_modules')]).catch(() =>
    // Another file system than the checkout's: hard links cannot cross it.
    run('cp', ['-a', join(ROOT, 'node_modules'), join(dir, 'node_modules')]),
  );
  const index = join(dir, 'node_modules', '.package-lock.json');
  if (existsSync(index)) {
    await rm(index);
    await copyFile(join(ROOT, 'node_modules', '.package-lock.json'), index);
  }
}

/**
 * `npm start` in the copy, as on a server: PORT/HOST from the environment,
 * SQLite under data/. npm passes no IPC channel on to the chat, which so
 * sends no listening signal: it is given a free port, and is ready when
 * `/health` answers there.
 */
async function npmStart(): Promise<ChatProcess> {
  const port = await freePort();
  return startChatProcess({
    command: 'npm',
    args: ['start'],
    cwd: copy,
    env: { ...baseEnv(), PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    probe: `http://127.0.0.1:${port}`,
  });
}

/** The page, its script, a send and the history: the chat works end to end. */
async function expectServes(chat: ChatProcess): Promise<void> {
  const page = await http(`${chat.url}/`);
  expect(page.status).toBe(200);
  expect(page.headers['content-type']).toMatch(/^text\/html/);
  const script = /<script[^>]+src="(\/assets\/[^"]+\.js)"/.exec(page.text)?.[1];
  expect(script).toBeDefined();
  const asset = await http(`${chat.url}${script}`);
  expect(asset.status).toBe(200);
  expect(asset.headers['content-type']).toMatch(/javascript/);

  const text = `started ${Date.now()}`;
  const sent = await postJson(`${chat.url}/send`, { room: 'start', text });
  expect(sent.status).toBe(200);
  const history = await http(`${chat.url}/history?room=start`);
  expect(history.json<HistoryAnswer>().messages.at(-1)).toMatchObject({
    id: sent.json<SendAnswer>().id,
    text,
  });
}

/** Marks a source as just edited: newer than any build made before. */
async function touch(file: string): Promise<void> {
  const now = new Date();
  await utimes(join(copy, file), now, now);
}

beforeAll(async () => {
  copy = await mkdtemp(join(tmpdir(), 'chat-start-'));
  await cloneInto(copy);
}, SLOW);

afterAll(async () => {
  await rm(copy, { recursive: true, force: true });
});

describe('npm start', () => {
  describe('on a fresh clone (npm install && npm start)', () => {
    it(
      'builds first, saying why, then serves the page and the API',
      async () => {
        expect(existsSync(join(copy, 'dist'))).toBe(false);
        const chat = await npmStart();
        try {
          expect(chat.output()).toContain('npm start: no build yet');
          expect(existsSync(join(copy, 'dist', 'server', 'main.js'))).toBe(true);
          await expectServes(chat);
        } finally {
          await chat.stop();
        }
      },
      SLOW,
    );

    it('starts at once when the build is up to date', async () => {
      const chat = await npmStart();
      try {
        expect(chat.output()).not.toContain('npm start:');
        expect(chat.output()).not.toMatch(/vite v\d/);
        await expectServes(chat);
      } finally {
        await chat.stop();
      }
    });

    it(
      'rebuilds when a source is newer than the build',
      async () => {
        await touch('client/main.ts');
        const chat = await npmStart();
        try {
          expect(chat.output()).toContain('npm start: the build is older than the sources');
          expect(chat.output()).toMatch(/vite v\d/);
          await expectServes(chat);
        } finally {
          await chat.stop();
        }
      },
      SLOW,
    );
  });

  describe('in a production copy: dev dependencies pruned, then client/ removed', () => {
    beforeAll(async () => {
      await run('npm', ['prune', '--omit=dev', '--offline', '--no-audit', '--no-fund'], {
        cwd: copy,
      });
    }, SLOW);

    it('has no build tools left', () => {
      expect(existsSync(join(copy, 'node_modules', 'vite'))).toBe(false);
      expect(existsSync(join(copy, 'node_modules', 'typescript'))).toBe(false);
      expect(existsSync(join(copy, 'node_modules', 'express'))).toBe(true);
    });

    it('starts the build it has, with a warning, when a source is newer', async () => {
      await touch('server/main.ts');
      const chat = await npmStart();
      try {
        expect(chat.output()).toMatch(
          /npm start: the build is older than the sources, but it cannot be rebuilt here \(the build tools .* are not installed\)/,
        );
        await expectServes(chat);
      } finally {
        await chat.stop();
      }
    });

    it('serves the page and the API without client/, never calling Vite', async () => {
      await rm(join(copy, 'client'), { recursive: true });
      const chat = await npmStart();
      try {
        expect(chat.output()).not.toMatch(/vite v\d|vite: not found/);
        await expectServes(chat);
      } finally {
        await chat.stop();
      }
    });

    it('refuses to start without a build, and says how to make one', async () => {
      await rename(join(copy, 'dist'), join(copy, 'dist-away'));
      try {
        const { code, output } = await runToExit({
          command: 'npm',
          args: ['start'],
          cwd: copy,
          env: { ...baseEnv(), PORT: '0', HOST: '127.0.0.1' },
        });
        expect(code).not.toBe(0);
        expect(output).toContain('npm start: no build yet');
        expect(output).toContain('npm ci && npm run build');
        expect(output).not.toContain('chat listening');
      } finally {
        await rmdir(join(copy, 'dist')).catch(() => {});
        await rename(join(copy, 'dist-away'), join(copy, 'dist'));
      }
    });
  });
});
