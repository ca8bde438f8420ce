import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { lstat, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestChat, type TestChat } from '../helpers/chat.ts';

let chat: TestChat | undefined;
let dir: string;
afterEach(async () => {
  await chat?.close();
  chat = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** Leaves a socket file with nobody listening, as a server killed with SIGKILL does. */
async function leaveStaleSocket(path: string): Promise<void> {
  const child = spawn(
    process.execPath,
    ['-e', 'require("net").createServer().listen(process.argv[1], () => console.log("up"))', path],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await once(child.stdout!, 'data');
  child.kill('SIGKILL');
  await once(child, 'exit');
  expect((await lstat(path)).isSocket()).toBe(true);
}

describe('PORT as a socket path', () => {
  it('starts over a socket file left by a killed server', async () => {
    dir = await mkdtemp(join(tmpdir(), 'lpchat-stale-'));
    const path = join(dir, 'chat.sock');
    await leaveStaleSocket(path);
    chat = await startTestChat({ port: path });
    expect(chat.url).toBe(path);
  });

  it('refuses to take the path from a server that still answers on it', async () => {
    dir = await mkdtemp(join(tmpdir(), 'lpchat-live-'));
    const path = join(dir, 'chat.sock');
    const live = createServer((socket) => socket.end());
    live.listen(path);
    await new Promise((resolve) => live.once('listening', resolve));
    try {
      await expect(startTestChat({ port: path })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await new Promise((resolve) => live.close(resolve));
    }
  });
});
