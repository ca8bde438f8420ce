import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecvAnswer } from '../../protocol/protocol.ts';
import type { Config } from '../../server/core/config.ts';
import type { RunningChat } from '../../server/process/server.ts';
import { builtModule, ensureBuilt, ROOT } from '../helpers/build.ts';
import { http, postJson } from './http.ts';
import { withStep5Limits } from './linux-guide.ts';
import {
  checkSite,
  hardNofile,
  hasNginx,
  NGINX_SITE,
  type RunningHttpsSite,
  type RunningNginx,
  startHttpsSite,
  startSite,
  swapOnce,
  type TlsFiles,
  workerRlimitNofile,
} from './nginx.ts';
import {
  expectChatRefusesLargeBody,
  expectEveryRouteReachesChat,
  expectForgedForwardedForRefused,
  expectHeldPollAnswered,
  expectHoldsWaitingPolls,
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
} from './nginx-fixtures.ts';
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

function startProxiedChat(tweak: Partial<Config> = {}) {
  return startProxied(
    () => startUnitChat(tweak),
    () => startSite(),
  );
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
      await expectEveryRouteReachesChat(nginx);
    });

    it('holds a poll until a send through nginx answers it', async () => {
      await expectHeldPollAnswered(chat, nginx, 'held');
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
      await expectLeavingVisitorDropsPoll(chat, nginx, 'gone');
    });

    it('does not pass /metrics to the chat', async () => {
      await expectMetricsRefused(nginx);
    });

    it('lets the chat refuse a body over 16 KB with its JSON 413', async () => {
      await expectChatRefusesLargeBody(nginx);
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

    it('gives two visitors separate send budgets, though both reach the chat from nginx', async () => {
      await expectPerVisitorBudgets(nginx);
    });

    it('does not let a visitor escape its budget with a forged X-Forwarded-For', async () => {
      await expectForgedForwardedForRefused(nginx);
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
      expectSameSecurityHeaders(await http(`${nginx.url}/`), await http(`${node.url}/`));
    });
  });

  describe('over HTTPS and HTTP/2: nginx-site-https.conf, the site as certbot leaves it (step 7)', () => {
    let chat: RunningChat;
    let nginx: RunningHttpsSite;
    let tls: TlsFiles & { dir: string };
    let stop: () => Promise<void>;

    beforeAll(async () => {
      tls = await makeTlsFiles('chat.example.com');
      ({ chat, nginx, stop } = await startProxied(
        // The site's name in ALLOWED_HOSTS, as the guide says (the unit binds 127.0.0.1).
        () => startUnitChat({ allowedHosts: ['chat.example.com'] }),
        () => startHttpsSite(tls),
      ));
    }, 60_000);
    afterAll(async () => {
      await stop?.();
      await rm(tls.dir, { recursive: true, force: true });
    });

    it('answers a waiting poll and a send on one HTTP/2 connection (curl --http2)', async () => {
      await expectPollAndSendOnOneHttp2Connection(chat, {
        host: 'chat.example.com',
        port: nginx.httpsPort,
        cacert: tls.fullchain,
        dir: tls.dir,
      });
    });

    it('redirects plain HTTP to HTTPS, as certbot’s --redirect set it up', async () => {
      const answer = await http(`${nginx.url}/`, { headers: { host: 'chat.example.com' } });
      expect(answer.status).toBe(301);
      expect(answer.headers.location).toBe('https://chat.example.com/');
    });
  });

  describe('with step 5’s limits in nginx.conf: 5,000 waiting polls', () => {
    let proxied: Proxied<RunningChat>;

    beforeAll(async () => {
      // Step 5's edit, run from the guide; then its worker_rlimit_nofile
      // lowered to this machine's hard limit, which a test cannot raise
      // (nginx runs under that limit too).
      const nofile = hardNofile();
      proxied = await startProxied(
        // Long enough that the first poll still waits when the last is held
        // on a loaded machine, below the site's 65 s read timeout.
        // The polls carry no client id (the 2011 client's shape): the per-browser share is off.
        () => startUnitChat({ pollTimeoutMs: 55_000, maxPollsPerClient: 0 }),
        () =>
          startSite([], {
            nofile,
            editMain: async (main) => {
              const edited = await withStep5Limits(main);
              const { line } = workerRlimitNofile(edited);
              return swapOnce(edited, [[line, `worker_rlimit_nofile ${nofile};`]], 'nginx.conf');
            },
          }),
      );
    }, 60_000);
    afterAll(() => proxied?.stop());

    it('holds them all through the site (one upstream address), and one send answers every one', async () => {
      const { heldMs, answeredMs } = await expectHoldsWaitingPolls(proxied, 5_000);
      console.log(
        `linux nginx capacity: 5000 polls waiting after ${heldMs} ms; one send answered all in ${answeredMs} ms`,
      );
    }, 120_000);
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
      expect(recvReadTimeoutMs(site)).toBeGreaterThanOrEqual(defaults.pollTimeoutMs + 10_000);
      expect(locationBlock(site, '= /recv')).toMatch(/proxy_buffering off;/);
    });

    it('keeps the poll timeout of the sample chat.env under that read timeout', async () => {
      expect(Number((await readEnvFile()).POLL_TIMEOUT_MS) + 10_000).toBeLessThanOrEqual(
        recvReadTimeoutMs(site),
      );
    });
  });
});
