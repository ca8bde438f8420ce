/**
 * examples/naive: the 2011 chat, flaws and all. These tests hold it to what
 * the guide says of it: it serves the 2011 page, it chats, it keeps the
 * default nickname, it stops loudly on a busy port, and its flaws show.
 */

import { once } from 'node:events';
import { createServer } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/wait.ts';
import { type ExampleProcess, runToExit, sendForm, startExample } from './example-process.ts';

let naive: ExampleProcess;
beforeAll(async () => {
  naive = await startExample('naive');
});
afterAll(async () => {
  await naive?.stop();
});

describe('examples/naive', () => {
  describe('GET /', () => {
    it('should serve the 2011 page, with jQuery from this server rather than a CDN', async () => {
      const page = await (await fetch(`${naive.url}/`)).text();
      expect(page).toContain('<form action="/send" method="post" id="send">');
      const scripts = [...page.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]);
      expect(scripts).toEqual(['/jquery.min.js']);
      const jquery = await fetch(`${naive.url}/jquery.min.js`);
      expect(jquery.status).toBe(200);
      expect(await jquery.text()).toMatch(/jQuery v\d/);
    });
  });

  describe('POST /send with a poll waiting', () => {
    it('should hand the message to the poll, with "Anonymous" when no nickname is given', async () => {
      const poll = fetch(`${naive.url}/recv`).then((res) => res.json());
      await until(
        async () =>
          isDeepStrictEqual(await (await fetch(`${naive.url}/stats`)).json(), { waiting: 1 }),
        'the stats to read { waiting: 1 }',
      );
      expect(await sendForm(naive.url, { text: 'hi' })).toEqual({ status: 'ok' });
      expect(await poll).toEqual({ messages: [{ nickname: 'Anonymous', text: 'hi' }] });
    });
  });

  describe('flaw 3: a client that leaves', () => {
    it('should stay in the array until the next send', async () => {
      const gone = new AbortController();
      const poll = fetch(`${naive.url}/recv`, { signal: gone.signal }).catch(() => 'aborted');
      await until(
        async () =>
          isDeepStrictEqual(await (await fetch(`${naive.url}/stats`)).json(), { waiting: 1 }),
        'the stats to read { waiting: 1 }',
      );
      gone.abort();
      expect(await poll).toBe('aborted');
      // Still there: nothing removes it.
      expect(await (await fetch(`${naive.url}/stats`)).json()).toEqual({ waiting: 1 });
      await sendForm(naive.url, { text: 'flush' });
      expect(await (await fetch(`${naive.url}/stats`)).json()).toEqual({ waiting: 0 });
    });
  });

  describe('when its port is busy', () => {
    it('should stop with an error instead of saying it listens', async () => {
      const blocker = createServer().listen(0, '127.0.0.1');
      await once(blocker, 'listening');
      const { port } = blocker.address() as { port: number };
      try {
        const { code, output } = await runToExit('naive', { PORT: String(port) });
        expect(code).not.toBe(0);
        expect(output).toContain('EADDRINUSE');
        expect(output).not.toContain('naive chat on');
      } finally {
        blocker.close();
      }
    });
  });
});
