/**
 * The real nginx (Debian's nginx-light) running the real deploy/nginx.conf in
 * front of a real chat on loopback: what docker-compose deploys, minus Docker.
 * (The site file for a host's own nginx has its own suite: linux-nginx.test.ts.)
 */
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaults } from '../../server/core/config.ts';
import {
  type RecvBody,
  type SendBody,
  startTestChat,
  type TestChat,
  until,
} from '../helpers/chat.ts';
import { apiRoutes } from './api-routes.ts';
import { http, postJson } from './http.ts';
import { hasNginx, NGINX_CONF, type RunningNginx, startNginx } from './nginx.ts';

const POLL_TIMEOUT_MS = 3_000;

let root: string;

beforeAll(async () => {
  // A stand-in for the Vite build, so the test needs no `npm run build`.
  root = await mkdtemp(join(tmpdir(), 'chat-public-'));
  await chmod(root, 0o755); // nginx's workers run as `nobody` when the test runs as root.
  await mkdir(join(root, 'assets'));
  await writeFile(join(root, 'index.html'), '<!doctype html><title>chat</title>\n');
  await writeFile(join(root, 'assets', 'x-abc123.js'), 'console.log("chat");\n');
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A chat behind nginx, trusting one proxy hop as docker-compose sets it. */
async function startProxiedChat(overrides: Parameters<typeof startTestChat>[0] = {}) {
  const chat = await startTestChat({ trustProxy: 1, pollTimeoutMs: POLL_TIMEOUT_MS, ...overrides });
  let nginx: RunningNginx;
  try {
    nginx = await startNginx({ upstream: new URL(chat.url).host, root });
  } catch (error) {
    await chat.close();
    throw error;
  }
  return {
    chat,
    nginx,
    async stop() {
      await nginx.stop();
      await chat.close();
    },
  };
}

describe.skipIf(!hasNginx)('deploy/nginx.conf in front of a chat', () => {
  let chat: TestChat;
  let nginx: RunningNginx;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    ({ chat, nginx, stop } = await startProxiedChat());
  });
  afterAll(() => stop());

  describe('the API', () => {
    it('passes every route of the chat app to the chat', async () => {
      // An invalid room makes /recv and /history answer at once; every route
      // then answers in JSON, which only the chat does (nginx's pages are HTML).
      for (const path of await apiRoutes()) {
        const answer = await http(`${nginx.url}${path}?room=!`);
        expect({ path, type: answer.headers['content-type'] }).toEqual({
          path,
          type: 'application/json; charset=utf-8',
        });
      }
    });
  });

  describe('GET /metrics through nginx', () => {
    it('does not reach the chat: metrics are scraped on the compose network only', async () => {
      const answer = await http(`${nginx.url}/metrics`);
      // The chat would answer in JSON, whatever it serves there.
      expect({ status: answer.status, type: answer.headers['content-type'] }).toEqual({
        status: 404,
        type: 'text/html',
      });
    });
  });

  describe('POST /send through nginx: the body limit', () => {
    it('lets the chat refuse a body over 16 KB with its JSON 413', async () => {
      const tooLarge = await postJson(`${nginx.url}/send`, { text: 'x'.repeat(20 * 1024) });
      expect(tooLarge.status).toBe(413);
      expect(tooLarge.json()).toMatchObject({ error: { code: 'body_too_large' } });
    });
  });

  describe('GET /recv through nginx', () => {
    it('holds the poll until a send through nginx answers it', async () => {
      const poll = http(`${nginx.url}/recv?room=held&since=0`);
      await until(() => chat.hub.waiting === 1, 'the poll to wait in the chat');

      const sent = await postJson(`${nginx.url}/send`, { room: 'held', text: 'through nginx' });
      expect(sent.status).toBe(200);

      const answer = await poll;
      expect(answer.status).toBe(200);
      const body = answer.json<RecvBody>();
      expect(body.messages.map((m) => m.text)).toEqual(['through nginx']);
      expect(body.cursor).toBe(sent.json<SendBody>().id);
    });

    it('passes on the empty answer when the poll timeout passes', async () => {
      const answer = await http(`${nginx.url}/recv?room=quiet&since=0`);
      expect(answer.status).toBe(200);
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(answer.json<RecvBody>()).toMatchObject({ messages: [], cursor: 0 });
    });

    it('lets the chat drop the waiting poll when the visitor goes away', async () => {
      const leave = new AbortController();
      const poll = http(`${nginx.url}/recv?room=gone&since=0`, { signal: leave.signal });
      await until(() => chat.hub.waiting === 1, 'the poll to wait in the chat');
      leave.abort();
      await expect(poll).rejects.toThrow(/abort/i);
      await until(() => chat.hub.waiting === 0, 'nginx to close the upstream request');
    });
  });

  describe('the long-poll settings in nginx.conf', () => {
    it('gives /recv a read timeout longer than the default poll timeout, with 10 s to spare', async () => {
      const recv = locationBlock(await readFile(NGINX_CONF, 'utf8'), '= /recv');
      const seconds = Number(/proxy_read_timeout (\d+)s;/.exec(recv)?.[1]);
      expect(seconds * 1000).toBeGreaterThanOrEqual(defaults.pollTimeoutMs + 10_000);
    });

    it('does not buffer /recv, so an answer leaves the moment the chat writes it', async () => {
      const recv = locationBlock(await readFile(NGINX_CONF, 'utf8'), '= /recv');
      expect(recv).toMatch(/proxy_buffering off;/);
    });
  });

  describe('static files', () => {
    it('serves index.html itself, revalidated on every load', async () => {
      // The chat runs with serveStatic false: only nginx can answer this.
      const page = await http(`${nginx.url}/`);
      expect(page.status).toBe(200);
      expect(page.text).toContain('<title>chat</title>');
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.headers['cache-control']).toBe('no-cache');
    });

    it('serves hashed assets as cacheable for a year', async () => {
      const asset = await http(`${nginx.url}/assets/x-abc123.js`);
      expect(asset.status).toBe(200);
      expect(asset.headers['content-type']).toMatch(/javascript/);
      expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    });

    it('answers 404 for a file that is not there', async () => {
      expect((await http(`${nginx.url}/assets/missing.js`)).status).toBe(404);
      expect((await http(`${nginx.url}/sendx`)).status).toBe(404);
    });

    it('sends the security headers the chat sends with its own static files', async () => {
      const node = await startTestChat({ serveStatic: true, staticDir: root });
      try {
        const fromNode = await http(`${node.url}/`);
        const fromNginx = await http(`${nginx.url}/`);
        for (const name of [
          'content-security-policy',
          'cross-origin-opener-policy',
          'cross-origin-resource-policy',
          'referrer-policy',
          'x-content-type-options',
          'x-frame-options',
        ]) {
          expect({ [name]: fromNginx.headers[name] }).toEqual({ [name]: fromNode.headers[name] });
        }
      } finally {
        await node.close();
      }
    });
  });

  describe('POST /send through nginx: the cross-site check', () => {
    const send = (headers: Record<string, string>) =>
      postJson(`${nginx.url}/send`, { room: 'xsite', text: 'hi' }, { headers });

    it('passes a same-origin browser request', async () => {
      expect((await send({ 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    });

    it('passes an Origin naming the host and port the visitor used', async () => {
      // No Sec-Fetch-Site (an older browser): the check compares Origin with
      // the Host nginx passes on, port included.
      expect((await send({ origin: nginx.url })).status).toBe(200);
    });

    it('refuses another site with 403 cross_site', async () => {
      const foreign: Record<string, string>[] = [
        { origin: 'http://evil.example' },
        { 'sec-fetch-site': 'cross-site' },
      ];
      for (const headers of foreign) {
        const refused = await send(headers);
        expect(refused.status).toBe(403);
        expect(refused.json()).toMatchObject({ error: { code: 'cross_site' } });
      }
    });
  });
});

describe.skipIf(!hasNginx)(
  'deploy/nginx.conf: the visitor address reaches the chat (TRUST_PROXY=1)',
  () => {
    let nginx: RunningNginx;
    let stop: () => Promise<void>;

    beforeAll(async () => {
      // One send per visitor, and no refill within the test: the rate limit
      // keys on req.ip, so it shows which address the chat saw.
      ({ nginx, stop } = await startProxiedChat({ sendRatePerSec: 0.0001, sendBurst: 1 }));
    });
    afterAll(() => stop());

    const sendFrom = (localAddress: string, headers: Record<string, string> = {}) =>
      postJson(`${nginx.url}/send`, { text: 'hi' }, { localAddress, headers });

    it('gives two visitors separate send budgets, though both reach the chat from nginx', async () => {
      expect((await sendFrom('127.0.0.2')).status).toBe(200);
      expect((await sendFrom('127.0.0.2')).status).toBe(429);
      expect((await sendFrom('127.0.0.3')).status).toBe(200);
    });

    it('does not let a visitor escape its budget with a forged X-Forwarded-For', async () => {
      expect((await sendFrom('127.0.0.4')).status).toBe(200);
      const forged = await sendFrom('127.0.0.4', { 'x-forwarded-for': '203.0.113.9' });
      expect(forged.status).toBe(429);
    });
  },
);

/** The body of `location <match> { … }` in an nginx config (no nested blocks). */
function locationBlock(conf: string, match: string): string {
  const start = conf.indexOf(`location ${match} {`);
  if (start < 0) throw new Error(`no "location ${match}" in nginx.conf`);
  return conf.slice(start, conf.indexOf('}', start));
}
