/**
 * deploy/linux/nginx-site.conf, the site file for a host's own nginx, run by
 * the real nginx (Debian 12's 1.22) in front of the built chat:
 * - `nginx -t` on the file unchanged, included from Debian's main config;
 * - running, with only its listen lines changed, in front of the chat on
 *   127.0.0.1:3000, the address the file proxies to, started from dist/ with
 *   chat.service's own settings (Environment= lines and the sample
 *   chat.env), read through the chat's config check;
 * - the static part once more with its root pointed at the build.
 *
 * The chat must get 127.0.0.1:3000 itself: if something else listens there,
 * this suite says so and fails.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecvAnswer, SendAnswer } from '../../protocol/protocol.ts';
import type { Config } from '../../server/core/config.ts';
import type { RunningChat } from '../../server/process/server.ts';
import { until } from '../helpers/wait.ts';
import { apiRoutes } from './api-routes.ts';
import { builtModule, ensureBuilt, ROOT } from './build.ts';
import { http, postJson } from './http.ts';
import {
  checkSite,
  hasNginx,
  NGINX_SITE,
  type RunningNginx,
  startSite,
  swapOnce,
} from './nginx.ts';
import { readEnvFile, readUnit } from './systemd-unit.ts';

const POLL_TIMEOUT_MS = 2_000;

type ServerModule = typeof import('../../server/process/server.ts');
type ConfigModule = typeof import('../../server/core/config.ts');
type LogModule = typeof import('../../server/core/log.ts');

/**
 * The built chat with chat.service's settings and the sample chat.env on top
 * (as systemd applies them), then what a test needs: an in-memory store
 * instead of /var/lib/chat, a short poll timeout, and `tweak`.
 */
async function startUnitChat(tweak: Partial<Config> = {}): Promise<RunningChat> {
  await ensureBuilt();
  const { startChat } = await builtModule<ServerModule>('server/process/server.js');
  const { loadConfig } = await builtModule<ConfigModule>('server/core/config.js');
  const { silentLog } = await builtModule<LogModule>('server/core/log.js');
  const env = {
    ...(await readUnit()).environment(),
    ...(await readEnvFile()),
    DATABASE_URL: 'memory:',
    POLL_TIMEOUT_MS: String(POLL_TIMEOUT_MS),
  };
  const config = { ...loadConfig(env), ...tweak };
  try {
    return await startChat(config, { log: silentLog });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new Error(
        `${config.host}:${config.port} is taken: the site proxies there, so the chat must listen there. Stop what listens on it and run again.`,
      );
    }
    throw error;
  }
}

async function startProxiedChat(tweak: Partial<Config> = {}) {
  const chat = await startUnitChat(tweak);
  let nginx: RunningNginx;
  try {
    nginx = await startSite();
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

/**
 * Resolves once the chat holds `count` waiting polls (its own count, not
 * asked through nginx): the poll has reached the chat.
 */
async function waitingPolls(chat: RunningChat, count: number): Promise<void> {
  await until(() => chat.hub.waiting === count, `${count} polls waiting in the chat`);
}

/** The body of `location <match> { … }` (no nested blocks). */
function locationBlock(conf: string, match: string): string {
  const start = conf.indexOf(`location ${match} {`);
  if (start < 0) throw new Error(`no "location ${match}" in the site file`);
  return conf.slice(start, conf.indexOf('}', start));
}

const title = hasNginx
  ? 'deploy/linux/nginx-site.conf'
  : 'deploy/linux/nginx-site.conf: SKIPPED, nginx is not installed here (CI installs nginx-light)';

describe.skipIf(!hasNginx)(title, () => {
  describe('nginx -t, on the file unchanged, inside Debian 12’s main configuration', () => {
    it('accepts it, without a warning', async () => {
      const { ok, output } = await checkSite();
      expect(output).toContain('test is successful');
      expect(output).not.toMatch(/\[(warn|emerg|alert|crit)\]/);
      expect(ok).toBe(true);
    });

    it('really checks it: the same file with a misspelt directive is refused', async () => {
      const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
      const { tmpdir } = await import('node:os');
      const dir = await mkdtemp(join(tmpdir(), 'chat-site-'));
      try {
        const broken = join(dir, 'chat');
        const source = await readFile(NGINX_SITE, 'utf8');
        await writeFile(
          broken,
          swapOnce(source, [['proxy_buffering off;', 'proxy_bufering off;']], 'site'),
        );
        const { ok, output } = await checkSite(broken);
        expect(ok).toBe(false);
        expect(output).toMatch(/unknown directive "proxy_bufering"/);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });

  describe('in front of the built chat, run with chat.service’s settings (only the listen port changed)', () => {
    let chat: RunningChat;
    let nginx: RunningNginx;
    let stop: () => Promise<void>;

    beforeAll(async () => {
      ({ chat, nginx, stop } = await startProxiedChat());
    }, 60_000);
    afterAll(() => stop?.());

    it('listens where the site proxies to, on loopback only, trusting only a loopback proxy', () => {
      expect(chat.url).toBe('http://127.0.0.1:3000');
      expect(chat.config.trustProxy).toBe('loopback');
      expect(chat.config.serveStatic).toBe(false);
    });

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

    it('holds a poll until a send through nginx answers it', async () => {
      const poll = http(`${nginx.url}/recv?room=held&since=0`);
      await waitingPolls(chat, 1);

      const sent = await postJson(`${nginx.url}/send`, { room: 'held', text: 'through nginx' });
      expect(sent.status).toBe(200);

      const answer = await poll;
      expect(answer.status).toBe(200);
      const body = answer.json<RecvAnswer>();
      expect(body.messages.map((m) => m.text)).toEqual(['through nginx']);
      expect(body.cursor).toBe(sent.json<SendAnswer>().id);
    });

    it('ends a poll held for the whole poll timeout with the chat’s empty answer, not a proxy error', async () => {
      const started = Date.now();
      const answer = await http(`${nginx.url}/recv?room=quiet&since=0`);
      expect(Date.now() - started).toBeGreaterThanOrEqual(POLL_TIMEOUT_MS - 50);
      expect(answer.status).toBe(200);
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(answer.json<RecvAnswer>()).toMatchObject({ messages: [], cursor: 0 });
    });

    it('lets the chat drop the waiting poll when the visitor goes away', async () => {
      const leave = new AbortController();
      const poll = http(`${nginx.url}/recv?room=gone&since=0`, { signal: leave.signal });
      await waitingPolls(chat, 1);
      leave.abort();
      await expect(poll).rejects.toThrow(/abort/i);
      await waitingPolls(chat, 0);
    });

    it('does not pass /metrics to the chat', async () => {
      for (const path of ['/metrics', '/metrics?x=1']) {
        const answer = await http(`${nginx.url}${path}`);
        // The chat would answer in JSON, whatever it serves there.
        expect({ path, status: answer.status, type: answer.headers['content-type'] }).toEqual({
          path,
          status: 404,
          type: 'text/html',
        });
      }
    });

    it('lets the chat refuse a body over 16 KB with its JSON 413', async () => {
      const tooLarge = await postJson(`${nginx.url}/send`, { text: 'x'.repeat(20 * 1024) });
      expect(tooLarge.status).toBe(413);
      expect(tooLarge.json()).toMatchObject({ error: { code: 'body_too_large' } });
    });

    it('passes an Origin naming the host and port the visitor used (the cross-site check)', async () => {
      const send = (origin: string) =>
        postJson(`${nginx.url}/send`, { room: 'xsite', text: 'hi' }, { headers: { origin } });
      expect((await send(nginx.url)).status).toBe(200);
      expect((await send('http://evil.example')).status).toBe(403);
    });
  });

  describe('the visitor’s address: nginx sets X-Forwarded-For, the chat trusts its loopback peer', () => {
    let nginx: RunningNginx;
    let stop: () => Promise<void>;

    beforeAll(async () => {
      // One send per visitor, and no refill within the test: the send limit
      // keys on req.ip, so it shows which address the chat saw.
      ({ nginx, stop } = await startProxiedChat({ sendRatePerSec: 0.0001, sendBurst: 1 }));
    }, 60_000);
    afterAll(() => stop?.());

    const sendFrom = (localAddress: string, headers: Record<string, string> = {}) =>
      postJson(`${nginx.url}/send`, { text: 'hi' }, { localAddress, headers });

    it('gives two visitors separate send budgets, though both reach the chat from nginx', async () => {
      expect((await sendFrom('127.0.0.2')).status).toBe(200);
      expect((await sendFrom('127.0.0.2')).status).toBe(429);
      expect((await sendFrom('127.0.0.3')).status).toBe(200);
    });

    it('does not let a visitor escape its budget with a forged X-Forwarded-For', async () => {
      expect((await sendFrom('127.0.0.4')).status).toBe(200);
      for (const forged of ['203.0.113.9', '203.0.113.9, 198.51.100.7']) {
        const answer = await sendFrom('127.0.0.4', { 'x-forwarded-for': forged });
        expect({ forged, status: answer.status }).toEqual({ forged, status: 429 });
      }
    });
  });

  describe('the built client (the root pointed at this build instead of /opt/chat/current)', () => {
    let nginx: RunningNginx;
    let node: RunningChat;

    beforeAll(async () => {
      await ensureBuilt();
      nginx = await startSite([
        ['root /opt/chat/current/public;', `root ${join(ROOT, 'public')};`],
      ]);
      // The chat serving the same files itself: the headers to match.
      const { startChat } = await builtModule<ServerModule>('server/process/server.js');
      const { defaults } = await builtModule<ConfigModule>('server/core/config.js');
      const { silentLog } = await builtModule<LogModule>('server/core/log.js');
      node = await startChat(
        {
          ...defaults,
          port: 0,
          host: '127.0.0.1',
          databaseUrl: 'memory:',
          serveStatic: true,
          staticDir: join(ROOT, 'public'),
        },
        { log: silentLog },
      );
    }, 60_000);
    afterAll(async () => {
      await nginx?.stop();
      await node?.close();
    });

    it('serves index.html itself, revalidated on every load', async () => {
      const page = await http(`${nginx.url}/`);
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.text).toContain('<script');
      expect(page.headers['cache-control']).toBe('no-cache');
    });

    it('serves the hashed assets as cacheable for a year', async () => {
      const page = await http(`${nginx.url}/`);
      const script = /<script[^>]+src="(\/assets\/[^"]+\.js)"/.exec(page.text)?.[1];
      const asset = await http(`${nginx.url}${script}`);
      expect(asset.status).toBe(200);
      expect(asset.headers['content-type']).toMatch(/javascript/);
      expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect((await http(`${nginx.url}/assets/missing.js`)).status).toBe(404);
    });

    it('sends the security headers the chat sends with its own static files', async () => {
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
    });
  });

  describe('what the file itself says', () => {
    let site: string;
    beforeAll(async () => {
      site = await readFile(NGINX_SITE, 'utf8');
    });

    it('proxies to the address chat.service makes the chat listen on', async () => {
      const env = (await readUnit()).environment();
      expect(site).toMatch(new RegExp(`server ${env.HOST}:${env.PORT};`));
    });

    it('serves the client from the release chat.service runs', async () => {
      const workingDirectory = (await readUnit()).get('Service', 'WorkingDirectory');
      expect(site).toContain(`root ${workingDirectory}/public;`);
    });

    it('gives /recv a read timeout 10 s above the default poll timeout, and no buffering', async () => {
      const { defaults } = await import('../../server/core/config.ts');
      const recv = locationBlock(site, '= /recv');
      const seconds = Number(/proxy_read_timeout (\d+)s;/.exec(recv)?.[1]);
      expect(seconds * 1000).toBeGreaterThanOrEqual(defaults.pollTimeoutMs + 10_000);
      expect(recv).toMatch(/proxy_buffering off;/);
    });

    it('keeps the poll timeout of the sample chat.env under that read timeout', async () => {
      const recv = locationBlock(site, '= /recv');
      const seconds = Number(/proxy_read_timeout (\d+)s;/.exec(recv)?.[1]);
      expect(Number((await readEnvFile()).POLL_TIMEOUT_MS) + 10_000).toBeLessThanOrEqual(
        seconds * 1000,
      );
    });
  });
});
