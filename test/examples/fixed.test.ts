/**
 * examples/fixed: the naive chat plus a cursor, a poll timeout and clean-up
 * on close. Each test shows one fix against a real process; the poll
 * timeout is cut to 500 ms so the timeout shows quickly.
 */
import { once } from 'node:events';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/wait.ts';
import {
  type ExampleProcess,
  runToExit,
  sendForm,
  startExample,
  timedJson,
} from './example-process.ts';

const POLL_TIMEOUT_MS = 500;
let fixed: ExampleProcess;
beforeAll(async () => {
  fixed = await startExample('fixed', { POLL_TIMEOUT_MS: String(POLL_TIMEOUT_MS) });
});
afterAll(async () => {
  await fixed?.stop();
});

const stats = async () => (await fetch(`${fixed.url}/stats`)).json();

describe('examples/fixed', () => {
  describe('GET /', () => {
    it('should serve its own page: the 2011 form, with a cursor, text, and a retry', async () => {
      const page = await (await fetch(`${fixed.url}/`)).text();
      expect(page).toContain('<form action="/send" method="post" id="send">');
      expect(page).toContain('data: { since: since }');
      expect(page).not.toContain("'<p><b>'+message.nickname");
      expect((await fetch(`${fixed.url}/jquery.min.js`)).status).toBe(200);
    });
  });

  describe('fix 1, the cursor', () => {
    it('should answer at once with every message after since, and the cursor to send next', async () => {
      await sendForm(fixed.url, { nickname: 'Ann', text: 'one' });
      await sendForm(fixed.url, { text: 'two' });
      const { body } = await timedJson(`${fixed.url}/recv?since=0`);
      expect(body).toEqual({
        messages: [
          { id: 1, nickname: 'Ann', text: 'one' },
          { id: 2, nickname: 'Anonymous', text: 'two' },
        ],
        cursor: 2,
      });
      expect((await timedJson(`${fixed.url}/recv?since=1`)).body).toMatchObject({ cursor: 2 });
    });

    it('should give a waiting poll the message sent while it waits', async () => {
      const { messages } = (await stats()) as { messages: number };
      const poll = timedJson(`${fixed.url}/recv?since=${messages}`);
      await until(async () => (await stats()).waiting === 1, 'the poll to be waiting');
      await sendForm(fixed.url, { text: 'while you wait' });
      expect((await poll).body).toEqual({
        messages: [{ id: messages + 1, nickname: 'Anonymous', text: 'while you wait' }],
        cursor: messages + 1,
      });
    });
  });

  describe('fix 2, the timeout', () => {
    it('should end a poll with an empty list and the same cursor when nothing comes', async () => {
      const { messages } = (await stats()) as { messages: number };
      const { body, ms } = await timedJson(`${fixed.url}/recv?since=${messages}`);
      expect(body).toEqual({ messages: [], cursor: messages });
      expect(ms).toBeGreaterThanOrEqual(POLL_TIMEOUT_MS - 50);
    });
  });

  describe('fix 3, the clean-up', () => {
    it('should forget a client that goes away', async () => {
      const gone = new AbortController();
      const poll = fetch(`${fixed.url}/recv`, { signal: gone.signal }).catch(() => 'aborted');
      await until(async () => (await stats()).waiting === 1, 'the poll to be waiting');
      gone.abort();
      expect(await poll).toBe('aborted');
      await until(async () => (await stats()).waiting === 0, 'the server to forget the poll');
    });
  });

  describe('when its port is busy', () => {
    it('should stop with an error instead of saying it listens', async () => {
      const blocker = createServer().listen(0, '127.0.0.1');
      await once(blocker, 'listening');
      const { port } = blocker.address() as { port: number };
      try {
        const { code, output } = await runToExit('fixed', { PORT: String(port) });
        expect(code).not.toBe(0);
        expect(output).toContain('EADDRINUSE');
        expect(output).not.toContain('fixed chat on');
      } finally {
        blocker.close();
      }
    });
  });
});
