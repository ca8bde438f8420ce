/**
 * PORT as a path: IIS (Helicon Zoo, iisnode) hands Node a named pipe
 * (`\\.\pipe\…`) instead of a TCP port. A Unix socket is the Linux analogue,
 * and the same `server.listen(path)` serves both. The chat runs here as the
 * built entry point (`dist/server/main.js`) in a child process, configured
 * only by its environment, as IIS or Docker would start it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureBuilt, MAIN_JS } from '../helpers/build.ts';
import { type RecvBody, startTestChat } from '../helpers/chat.ts';
import { type Launched, launchChat } from '../helpers/launch.ts';
import { http, postJson } from './http.ts';

interface Health {
  status: string;
}

describe('PORT given as a socket path', () => {
  describe('behind IIS, which forwards the visitor in X-Forwarded-For', () => {
    it('tells visitors apart with TRUST_PROXY=1, though the pipe has no address', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'chat-socket-'));
      const socketPath = join(dir, 'chat.sock');
      // One send per visitor: the rate limit keys on req.ip.
      const chat = await startTestChat({
        port: socketPath,
        trustProxy: 1,
        sendRatePerSec: 0.0001,
        sendBurst: 1,
      });
      try {
        const sendAs = (visitor: string) =>
          postJson(
            'http://localhost/send',
            { text: 'hi' },
            {
              socketPath,
              headers: { 'x-forwarded-for': `203.0.113.9, ${visitor}` },
            },
          );
        expect((await sendAs('198.51.100.1')).status).toBe(200);
        expect((await sendAs('198.51.100.1')).status).toBe(429);
        // The first entry is whatever the visitor claimed; only the last,
        // added by IIS, counts.
        expect((await sendAs('198.51.100.2')).status).toBe(200);
      } finally {
        await chat.close();
        await rm(dir, { recursive: true, force: true });
      }
    });
  });

  describe('as the entry point starts under IIS or Docker', () => {
    let dir: string;
    let socketPath: string;
    let chat: Launched | undefined;

    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'chat-socket-'));
      socketPath = join(dir, 'chat.sock');
    });

    afterEach(async () => {
      if (chat && !chat.gone) {
        chat.kill('SIGKILL');
        await chat.exited;
      }
      chat = undefined;
      await rm(dir, { recursive: true, force: true });
    });

    /** Starts the built chat with PORT=<socket>; resolves when it says it listens there. */
    async function startMain(): Promise<Launched> {
      await ensureBuilt();
      chat = await launchChat({
        command: process.execPath,
        args: [MAIN_JS],
        env: {
          ...process.env,
          PORT: socketPath,
          DATABASE_URL: 'memory:',
          SERVE_STATIC: 'false',
          LOG_LEVEL: 'info',
          WORKERS: '1',
          REDIS_URL: '',
        },
        stdout: false,
      });
      return chat;
    }

    const get = (path: string) => http(`http://localhost${path}`, { socketPath });

    it('listens on the socket, says so with its path, and answers over it', async () => {
      const { listening } = await startMain();
      expect(listening).toEqual({
        type: 'chat:listening',
        url: socketPath,
        path: socketPath,
        pids: [chat!.child.pid],
      });
      const health = await get('/health');
      expect(health.status).toBe(200);
      expect(health.json<Health>()).toMatchObject({ status: 'ok' });
    });

    it('answers a waiting poll with the empty list on SIGTERM, then exits cleanly', async () => {
      const { child, exited } = await startMain();
      const poll = get('/recv?since=0');
      // The waiting count in /metrics is the chat's own view of the held poll.
      while (!/^chat_polls_waiting 1$/m.test((await get('/metrics')).text));

      child.kill('SIGTERM');
      const answer = await poll;
      expect(answer.status).toBe(200);
      expect(answer.json<RecvBody>()).toMatchObject({ messages: [], cursor: 0 });
      expect(await exited).toEqual({ code: 0, signal: null });
    });
  });
});
