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
import { type RecvBody, startTestChat, type TestChat } from '../helpers/chat.ts';
import { freePort } from '../helpers/free-port.ts';
import { http, postJson } from './http.ts';
import { hasNginx, NGINX_CONF, type RunningNginx, startNginx } from './nginx.ts';
import {
  expectChatRefusesLargeBody,
  expectEveryRouteReachesChat,
  expectForgedForwardedForRefused,
  expectHeldPollAnswered,
  expectLeavingVisitorDropsPoll,
  expectMetricsRefused,
  expectPerVisitorBudgets,
  expectPollAndSendOnOneHttp2Connection,
  expectSameSecurityHeaders,
  locationBlock,
  makeTlsFiles,
  type Proxied,
  recvReadTimeoutMs,
  startProxied,
  type TestTls,
} from './nginx-fixtures.ts';

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
function startProxiedChat(overrides: Parameters<typeof startTestChat>[0] = {}) {
  return startProxied(
    () => startTestChat({ trustProxy: 1, pollTimeoutMs: POLL_TIMEOUT_MS, ...overrides }),
    (chat) => startNginx({ upstream: new URL(chat.url).host, root }),
  );
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
      await expectEveryRouteReachesChat(nginx);
    });
  });

  describe('GET /metrics through nginx', () => {
    it('does not reach the chat: metrics are scraped on the compose network only', async () => {
      await expectMetricsRefused(nginx);
    });
  });

  describe('POST /send through nginx: the body limit', () => {
    it('lets the chat refuse a body over 16 KB with its JSON 413', async () => {
      await expectChatRefusesLargeBody(nginx);
    });
  });

  describe('GET /recv through nginx', () => {
    it('holds the poll until a send through nginx answers it', async () => {
      await expectHeldPollAnswered(chat, nginx, 'held');
    });

    it('passes on the empty answer when the poll timeout passes', async () => {
      const answer = await http(`${nginx.url}/recv?room=quiet&since=0`);
      expect(answer.status).toBe(200);
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(answer.json<RecvBody>()).toMatchObject({ messages: [], cursor: 0 });
    });

    it('lets the chat drop the waiting poll when the visitor goes away', async () => {
      await expectLeavingVisitorDropsPoll(chat, nginx, 'gone');
    });
  });

  describe('the long-poll settings in nginx.conf', () => {
    it('gives /recv a read timeout longer than the default poll timeout, with 10 s to spare', async () => {
      const readTimeoutMs = recvReadTimeoutMs(await readFile(NGINX_CONF, 'utf8'));
      expect(readTimeoutMs).toBeGreaterThanOrEqual(defaults.pollTimeoutMs + 10_000);
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
        expectSameSecurityHeaders(await http(`${nginx.url}/`), await http(`${node.url}/`));
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
  'deploy/nginx.conf with deploy/nginx-tls.conf and a certificate (docker-compose.https.yml)',
  () => {
    let proxied: Proxied<TestChat>;
    let tls: TestTls;
    let tlsPort: number;

    beforeAll(async () => {
      tls = await makeTlsFiles('chat.example.com');
      tlsPort = await freePort();
      proxied = await startProxied(
        // The site's name, as the guides say: on loopback the chat answers no other.
        () =>
          startTestChat({
            trustProxy: 1,
            pollTimeoutMs: POLL_TIMEOUT_MS,
            allowedHosts: ['chat.example.com', '127.0.0.1'],
          }),
        (chat) =>
          startNginx({
            upstream: new URL(chat.url).host,
            root,
            tls: { fullchain: tls.fullchain, privkey: tls.privkey, port: tlsPort },
          }),
      );
    });
    afterAll(async () => {
      await proxied?.stop();
      await rm(tls.dir, { recursive: true, force: true });
    });

    it('answers a waiting poll and a send on one HTTP/2 connection (curl --http2)', async () => {
      await expectPollAndSendOnOneHttp2Connection(proxied.chat, {
        host: 'chat.example.com',
        port: tlsPort,
        cacert: tls.fullchain,
        dir: tls.dir,
      });
    });

    it('still serves plain HTTP on port 80', async () => {
      expect((await http(`${proxied.nginx.url}/health`)).status).toBe(200);
    });
  },
);

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

    it('gives two visitors separate send budgets, though both reach the chat from nginx', async () => {
      await expectPerVisitorBudgets(nginx);
    });

    it('does not let a visitor escape its budget with a forged X-Forwarded-For', async () => {
      await expectForgedForwardedForRefused(nginx);
    });
  },
);
