/**
 * The three IIS routes, checked without IIS (none runs on Linux):
 * - web.config            Helicon Zoo, engine nodejs.http (the original article's route)
 * - deploy/iis/httpplatform/web.config   HttpPlatformHandler
 * - deploy/iis/iisnode/web.config        iisnode, with iisnode-entry.cjs
 *
 * For each file: well-formed (xmllint); its rewrite rules and handler
 * mappings, replayed as IIS applies them, send exactly the chat's API routes
 * to Node and every other URL (/metrics included) to IIS's static files under
 * public/; no response buffering; its own handler, timeouts and settings; and
 * the built chat, started the way that module starts Node and with the
 * file's own environment, answers. What only IIS could show (that IIS reads
 * the file this way) is not checked here: docs/deploy-iis.md says so.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RecvAnswer } from '../../protocol/protocol.ts';
import { defaults, loadConfig } from '../../server/core/config.ts';
import { ensureBuilt, ROOT } from '../helpers/build.ts';
import { startTestChat } from '../helpers/chat.ts';
import { freePort } from '../helpers/free-port.ts';
import { apiRoutes } from './api-routes.ts';
import { baseEnv, type ChatProcess, type Launch, startChatProcess } from './chat-process.ts';
import { http, postJson } from './http.ts';
import {
  headersToNode,
  type IisConfig,
  iisConfig,
  iisnodeAppendXff,
  router,
} from './iis-config.ts';
import { STATIC_SECURITY_HEADERS } from './nginx-fixtures.ts';

const ZOO = join(ROOT, 'web.config');
const HTTP_PLATFORM = join(ROOT, 'deploy', 'iis', 'httpplatform', 'web.config');
const IISNODE = join(ROOT, 'deploy', 'iis', 'iisnode', 'web.config');
const IISNODE_ENTRY = join(ROOT, 'deploy', 'iis', 'iisnode', 'iisnode-entry.cjs');
const IIS_GUIDE = join(ROOT, 'docs', 'deploy-iis.md');

const WS = '/configuration/system.webServer';
/** The site folder docs/deploy-iis.md clones into, which HttpPlatformHandler's paths name. */
const IIS_SITE = 'C:\\inetpub\\chat';

interface Route {
  title: string;
  file: string;
  /** What URL Node's handler gets for an API route (`send`): the route itself, or the entry it is rewritten to. */
  apiUrl: (route: string) => string;
  /** URLs that must never reach Node nor leave public/, beyond the common ones. */
  private: string[];
}

const ROUTES: Route[] = [
  {
    title: 'web.config (Helicon Zoo)',
    file: ZOO,
    apiUrl: (route) => route,
    private: [],
  },
  {
    title: 'deploy/iis/httpplatform/web.config (HttpPlatformHandler)',
    file: HTTP_PLATFORM,
    apiUrl: (route) => route,
    private: ['/logs/node_1_20261201.log'],
  },
  {
    title: 'deploy/iis/iisnode/web.config (iisnode)',
    file: IISNODE,
    // iisnode passes Node the original URL, so the chat still sees /send.
    apiUrl: () => 'iisnode-entry.cjs',
    private: ['/iisnode-entry.cjs', '/iisnode/index.html'],
  },
];

const run = promisify(execFile);

/** `h:mm:ss` (an IIS timespan) in milliseconds. */
function timespanMs(value: string): number {
  const [h, m, s] = value.split(':').map(Number);
  return ((h ?? 0) * 3600 + (m ?? 0) * 60 + (s ?? 0)) * 1000;
}

describe.each(ROUTES)('$title', ({ file, apiUrl, private: privateUrls }) => {
  let config: IisConfig;
  let route: ReturnType<typeof router>;
  let api: string[];

  beforeAll(async () => {
    config = iisConfig(file);
    route = router(config);
    api = await apiRoutes();
  });

  it('is well-formed XML (xmllint)', async () => {
    await expect(run('xmllint', ['--noout', file])).resolves.toBeDefined();
  });

  describe('routing, replayed as IIS applies the rules and handlers', () => {
    it('sends every route of the chat app to Node', () => {
      expect(api).toEqual(['/health', '/history', '/ready', '/recv', '/send', '/time', '/typing']);
      for (const path of api) {
        const { url, handler } = route(`${path}?room=main&since=3`);
        expect({ path, url, handler }).toEqual({
          path,
          url: apiUrl(path.slice(1)),
          handler: 'node',
        });
      }
    });

    it('leaves the page and its assets to IIS, from public/', () => {
      expect(route('/')).toMatchObject({ url: 'public/', handler: 'iis-static' });
      expect(route('/index.html')).toMatchObject({
        url: 'public/index.html',
        handler: 'iis-static',
      });
      expect(route('/assets/index-abc123.js')).toMatchObject({
        url: 'public/assets/index-abc123.js',
        handler: 'iis-static',
      });
    });

    it('never hands Node or the web anything outside public/, /metrics included', () => {
      for (const path of [
        '/metrics',
        '/web.config',
        '/package.json',
        '/dist/server/main.js',
        '/data/chat.sqlite',
        '/node_modules/express/package.json',
        '/sendx',
        '/send/more',
        '/api/send',
        ...privateUrls,
      ]) {
        const { url, handler } = route(path);
        expect({ path, handler, inPublic: url.startsWith('public/') }).toEqual({
          path,
          handler: 'iis-static',
          inPublic: true,
        });
      }
    });
  });

  describe('limits, errors and caching', () => {
    it('lets each answer out as Node writes it (responseBufferLimit="0" on every Node handler)', () => {
      const limits = config.all(`${WS}/handlers/add/@responseBufferLimit`);
      expect(limits.length).toBe(config.count(`${WS}/handlers/add`));
      expect(new Set(limits)).toEqual(new Set(['0']));
    });

    it('caps bodies above the chat’s own 16 KB, so the chat answers 413 in JSON', () => {
      const max = Number(
        config.xpath(`${WS}/security/requestFiltering/requestLimits/@maxAllowedContentLength`),
      );
      expect(max).toBeGreaterThan(16 * 1024);
      expect(max).toBeLessThanOrEqual(64 * 1024);
    });

    it('gives the files IIS serves the twelve security headers the chat gives its own', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'chat-iis-static-'));
      await writeFile(join(dir, 'index.html'), '<!doctype html><title>chat</title>\n');
      const node = await startTestChat({ serveStatic: true, staticDir: dir });
      try {
        const fromNode = await http(`${node.url}/`);
        const iis = config.pairs(
          '/configuration/location[@path="public"]/system.webServer/httpProtocol/customHeaders/add',
        );
        const lower = Object.fromEntries(
          Object.entries(iis).map(([name, value]) => [name.toLowerCase(), value]),
        );
        for (const name of STATIC_SECURITY_HEADERS) {
          expect({ [name]: lower[name] }).toEqual({ [name]: fromNode.headers[name] });
        }
      } finally {
        await node.close();
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('passes the chat’s JSON errors through', () => {
      expect(config.xpath(`${WS}/httpErrors/@existingResponse`)).toBe('PassThrough');
    });

    it('revalidates index.html on every load and caches hashed assets for a year', () => {
      const cache = (path: string, attribute: string) =>
        config.xpath(
          `/configuration/location[@path="${path}"]/system.webServer/staticContent/clientCache/@${attribute}`,
        );
      expect(cache('public', 'cacheControlMode')).toBe('DisableCache');
      expect(cache('public/assets', 'cacheControlMode')).toBe('UseMaxAge');
      expect(cache('public/assets', 'cacheControlMaxAge')).toBe('365.00:00:00');
      expect(cache('public/assets', 'cacheControlCustom')).toContain('immutable');
    });
  });
});

// --- Each module's own settings ---------------------------------------------

describe('web.config (Helicon Zoo)', () => {
  const zoo = iisConfig(ZOO);
  const app = `${WS}/heliconZoo/application`;
  const env = () => zoo.pairs(`${app}/environmentVariables/add`);

  it('runs its handlers on Zoo’s documented Node engine, nodejs.http, one per bitness', () => {
    const name = zoo.xpath(`${app}/@name`);
    expect(zoo.all(`${WS}/handlers/add/@name`).sort()).toEqual([`${name}#x64`, `${name}#x86`]);
    expect(zoo.all(`${WS}/handlers/add/@modules`).sort()).toEqual([
      'HeliconZoo_x64',
      'HeliconZoo_x86',
    ]);
    expect(new Set(zoo.all(`${WS}/handlers/add/@scriptProcessor`))).toEqual(
      new Set(['nodejs.http']),
    );
  });

  it('runs the built entry point, with static files left to IIS', () => {
    expect(env().APP_WORKER).toMatch(/^%APPL_PHYSICAL_PATH%\\dist\\server\\main\.js$/);
    expect(env().SERVE_STATIC).toBe('false');
    expect(env().NODE_ENV).toBe('production');
  });

  it('listens on loopback only, trusting X-Forwarded-For from a loopback peer, which the API rule sets', () => {
    expect(env()).toMatchObject({ HOST: '127.0.0.1', TRUST_PROXY: 'loopback', WORKERS: '1' });
    expect(zoo.xpath(`${WS}/rewrite/rules/rule[1]/serverVariables/set/@name`)).toBe(
      'HTTP_X_FORWARDED_FOR',
    );
    expect(zoo.xpath(`${WS}/rewrite/rules/rule[1]/serverVariables/set/@value`)).toBe(
      '{REMOTE_ADDR}',
    );
  });

  describe('the <userEngines> entry in docs/deploy-iis.md', () => {
    let snippetDir: string;
    let snippet: string;
    let engine: IisConfig;

    beforeAll(async () => {
      // The ```xml block holding <userEngines>, wherever it is indented (in a list item).
      const guide = await readFile(IIS_GUIDE, 'utf8');
      const block = [...guide.matchAll(/^( *)```xml\n([\s\S]*?)^\1```/gm)].find((match) =>
        match[2]!.includes('<userEngines>'),
      );
      if (!block) throw new Error('docs/deploy-iis.md: no ```xml block with <userEngines>');
      const indent = block[1]!.length;
      const xml = block[2]!
        .split('\n')
        .map((line) => line.slice(indent))
        .join('\n');
      snippetDir = await mkdtemp(join(tmpdir(), 'chat-zoo-'));
      snippet = join(snippetDir, 'applicationHost.xml');
      await writeFile(snippet, xml);
      engine = iisConfig(snippet);
    });
    afterAll(() => rm(snippetDir, { recursive: true, force: true }));

    const add = `${WS}/heliconZooServer/userEngines/add`;

    it('is well-formed XML (xmllint)', async () => {
      await expect(run('xmllint', ['--noout', snippet])).resolves.toBeDefined();
    });

    it('declares the engine web.config names, over TCP and HTTP, running APP_WORKER', () => {
      expect(engine.xpath(`${add}/@name`)).toBe(
        zoo.xpath(`${WS}/handlers/add[1]/@scriptProcessor`),
      );
      expect(engine.xpath(`${add}/@transport`)).toBe('tcp');
      expect(engine.xpath(`${add}/@protocol`)).toBe('http');
      expect(engine.xpath(`${add}/@arguments`)).toBe('"%APP_WORKER%"');
    });

    it('points at a current node.exe, not Zoo’s bundled one', () => {
      const fullPath = engine.xpath(`${add}/@fullPath`);
      expect(fullPath).toBe('%ProgramFiles%\\nodejs\\node.exe');
      expect(fullPath).not.toContain('%SystemDrive%\\node\\bin');
    });
  });
});

describe('deploy/iis/httpplatform/web.config (HttpPlatformHandler)', () => {
  const hp = iisConfig(HTTP_PLATFORM);
  const platform = `${WS}/httpPlatform`;
  const env = () => hp.pairs(`${platform}/environmentVariables/environmentVariable`);

  it('hands every API request to the httpPlatformHandler module', () => {
    expect(hp.all(`${WS}/handlers/add/@modules`)).toEqual(['httpPlatformHandler']);
    expect(hp.xpath(`${WS}/handlers/add/@path`)).toBe('*');
  });

  it('starts node.exe on the built entry, telling it the port in PORT', () => {
    expect(hp.xpath(`${platform}/@processPath`)).toMatch(/\\node\.exe$/);
    expect(hp.xpath(`${platform}/@arguments`)).toBe(`${IIS_SITE}\\dist\\server\\main.js`);
    expect(env().PORT).toBe('%HTTP_PLATFORM_PORT%');
  });

  it('waits for an answer longer than a long-poll is held, in whole minutes', () => {
    const timeout = timespanMs(hp.xpath(`${platform}/@requestTimeout`));
    expect(timeout % 60_000).toBe(0);
    expect(timeout).toBeGreaterThanOrEqual(Number(env().POLL_TIMEOUT_MS) + 10_000);
    expect(timeout).toBeGreaterThanOrEqual(defaults.pollTimeoutMs + 10_000);
  });

  it('logs Node’s output to logs\\, which cannot be fetched', () => {
    expect(hp.xpath(`${platform}/@stdoutLogEnabled`)).toBe('true');
    expect(hp.xpath(`${platform}/@stdoutLogFile`)).toBe('.\\logs\\node');
    expect(hp.all(`${WS}/security/requestFiltering/hiddenSegments/add/@segment`)).toContain('logs');
  });

  it('listens on loopback only, trusting X-Forwarded-For from a loopback peer, which the API rule sets', () => {
    expect(env()).toMatchObject({
      HOST: '127.0.0.1',
      TRUST_PROXY: 'loopback',
      SERVE_STATIC: 'false',
      WORKERS: '1',
    });
    expect(hp.xpath(`${WS}/rewrite/rules/rule[1]/serverVariables/set/@value`)).toBe(
      '{REMOTE_ADDR}',
    );
  });
});

describe('deploy/iis/iisnode/web.config (iisnode)', () => {
  const ii = iisConfig(IISNODE);
  const iisnode = `${WS}/iisnode`;

  it('runs iisnode on the CommonJS entry beside it, the one file it handles', () => {
    expect(ii.all(`${WS}/handlers/add/@modules`)).toEqual(['iisnode']);
    const entry = ii.xpath(`${WS}/handlers/add/@path`);
    expect(entry).toBe('iisnode-entry.cjs');
    expect(existsSync(join(ROOT, 'deploy', 'iis', 'iisnode', entry))).toBe(true);
  });

  it('shows visitors no stack traces and opens no debugger (both on by default in iisnode)', () => {
    expect(ii.xpath(`${iisnode}/@devErrorsEnabled`)).toBe('false');
    expect(ii.xpath(`${iisnode}/@debuggingEnabled`)).toBe('false');
  });

  it('sets X-Forwarded-For to the visitor itself (its rule), not iisnode’s append, and trusts it as the one hop', () => {
    expect(ii.xpath(`${iisnode}/@enableXFF`)).toBe('false');
    expect(ii.pairs('/configuration/appSettings/add', 'key').TRUST_PROXY).toBe('1');
  });

  it('accepts more concurrent requests than the chat holds waiting polls (iisnode’s default is 1024)', () => {
    const cap = Number(ii.xpath(`${iisnode}/@maxConcurrentRequestsPerProcess`));
    expect(cap).toBeGreaterThan(defaults.maxWaiters);
  });

  it('runs one Node process, a current node.exe, in production mode', () => {
    expect(ii.xpath(`${iisnode}/@nodeProcessCountPerApplication`)).toBe('1');
    expect(ii.xpath(`${iisnode}/@nodeProcessCommandLine`)).toMatch(/\\nodejs\\node\.exe"$/);
    expect(ii.xpath(`${iisnode}/@node_env`)).toBe('production');
  });

  it('keeps its logs where they cannot be fetched', () => {
    expect(ii.xpath(`${iisnode}/@logDirectory`)).toBe('iisnode');
    expect(ii.all(`${WS}/security/requestFiltering/hiddenSegments/add/@segment`)).toContain(
      'iisnode',
    );
  });
});

// --- Forged forwarding headers, replayed through each file's rules -----------

describe.each(ROUTES)('$title: a visitor’s forged X-Forwarded-* headers', ({ file }) => {
  const config = iisConfig(file);
  const trustProxy = (): string =>
    file === IISNODE
      ? config.pairs('/configuration/appSettings/add', 'key').TRUST_PROXY!
      : file === ZOO
        ? config.pairs(`${WS}/heliconZoo/application/environmentVariables/add`).TRUST_PROXY!
        : config.pairs(`${WS}/httpPlatform/environmentVariables/environmentVariable`).TRUST_PROXY!;
  // A visitor at 1.2.3.4 that claims addresses ending like its own, which
  // iisnode's append would have let through, and another host.
  const visitor = (forged: string) => ({
    path: '/send',
    remoteAddr: '1.2.3.4',
    headers: {
      host: 'chat.example.com',
      'x-forwarded-for': forged,
      'x-forwarded-host': 'evil.example',
    },
  });

  it('reach Node replaced by the visitor’s address and the host it asked for', () => {
    for (const forged of ['11.2.3.4', '21.2.3.4', '203.0.113.9, 1.2.3.4']) {
      const headers = headersToNode(config, visitor(forged));
      expect({
        forged,
        xff: headers['x-forwarded-for'],
        host: headers['x-forwarded-host'],
      }).toEqual({ forged, xff: '1.2.3.4', host: 'chat.example.com' });
    }
  });

  it('do not move the address the chat counts: a second send is refused whatever it claims', async () => {
    const chat = await startTestChat({
      trustProxy: loadConfig({ TRUST_PROXY: trustProxy() }).trustProxy,
      // The site's name, as deploy-iis.md says (the chat here is on loopback).
      allowedHosts: ['chat.example.com'],
      sendRatePerSec: 0.0001,
      sendBurst: 1,
    });
    try {
      const send = (forged: string) => {
        const { host: _host, ...headers } = headersToNode(config, visitor(forged));
        return postJson(`${chat.url}/send`, { text: 'hi' }, { headers });
      };
      expect((await send('11.2.3.4')).status).toBe(200);
      expect((await send('21.2.3.4')).status).toBe(429);
    } finally {
      await chat.close();
    }
  });
});

describe('iisnode’s own X-Forwarded-For append (enableXFF), replayed: why it is off', () => {
  it('adds the address unless the header already ends with the same characters', () => {
    expect(iisnodeAppendXff(undefined, '1.2.3.4')).toBe('1.2.3.4');
    expect(iisnodeAppendXff('203.0.113.9', '1.2.3.4')).toBe('203.0.113.9, 1.2.3.4');
    // The hole: a visitor at 1.2.3.4 who sends 11.2.3.4 is counted as 11.2.3.4.
    expect(iisnodeAppendXff('11.2.3.4', '1.2.3.4')).toBe('11.2.3.4');
  });
});

// --- The built chat, started as each module starts it -----------------------

/**
 * A site folder as IIS would have it: the web.config (and iisnode's entry)
 * copied, and the build and dependencies of this checkout linked in.
 */
async function siteFolder(extra: string[] = []): Promise<string> {
  const site = await mkdtemp(join(tmpdir(), 'chat-iis-site-'));
  for (const name of ['dist', 'public', 'node_modules']) {
    await symlink(join(ROOT, name), join(site, name));
  }
  for (const path of extra) await copyFile(path, join(site, path.slice(path.lastIndexOf('/') + 1)));
  return site;
}

/**
 * Starts the chat on a port that was free a moment ago, as IIS hands one
 * over. Between that moment and the chat's bind, a connection of another
 * file running beside this one may take the port as its own local port (the
 * same ephemeral range): the chat then says the port is in use, and another
 * port is tried, three times at most.
 */
async function startOnFreePort(launch: (port: number) => Launch) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return { port, chat: await startChatProcess(launch(port)) };
    } catch (error) {
      if (attempt === 3 || !/port \d+ is in use/.test(String(error))) throw error;
    }
  }
}

/** Windows paths in the file, as this machine spells them (node.exe takes / as well). */
const posix = (value: string) => value.replace(/\\/g, '/');

describe('the built chat, started with each file’s settings as its module starts Node', () => {
  let chat: ChatProcess | undefined;
  let site: string | undefined;

  beforeAll(() => ensureBuilt(), 120_000);
  afterEach(async () => {
    await chat?.stop();
    chat = undefined;
    if (site) await rm(site, { recursive: true, force: true });
    site = undefined;
  });

  /** Health, a send read back by a poll, and no page (IIS serves it): over TCP or the socket. */
  async function expectAnswers(base: string, socketPath?: string): Promise<void> {
    const options = socketPath ? { socketPath } : {};
    expect((await http(`${base}/health`, options)).status).toBe(200);
    const sent = await postJson(`${base}/send`, { room: 'iis', text: 'through IIS' }, options);
    expect(sent.status).toBe(200);
    const polled = await http(`${base}/recv?room=iis&since=0`, options);
    expect(polled.json<RecvAnswer>().messages.map((m) => m.text)).toEqual(['through IIS']);
    expect((await http(`${base}/`, options)).status).toBe(404);
  }

  it('Helicon Zoo: node.exe "%APP_WORKER%" with the application’s variables and a TCP port in PORT', async () => {
    site = await siteFolder([ZOO]);
    const zoo = iisConfig(ZOO);
    const vars = zoo.pairs(`${WS}/heliconZoo/application/environmentVariables/add`);
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(vars)) {
      env[name] = posix(value.replaceAll('%APPL_PHYSICAL_PATH%', site));
    }
    expect(() => loadConfig(env)).not.toThrow();
    const started = await startOnFreePort((port) => ({
      command: process.execPath,
      args: [env.APP_WORKER!],
      cwd: tmpdir(),
      env: { ...baseEnv(), ...env, PORT: String(port) },
    }));
    chat = started.chat;
    expect(chat.url).toBe(`http://127.0.0.1:${started.port}`);
    await expectAnswers(chat.url);
    expect(existsSync(join(site, 'data', 'chat.sqlite'))).toBe(true);
  });

  it('HttpPlatformHandler: absolute paths into the site folder, from any working folder, PORT from HTTP_PLATFORM_PORT', async () => {
    site = await siteFolder([HTTP_PLATFORM]);
    const hp = iisConfig(HTTP_PLATFORM);
    // C:\inetpub\chat (docs/deploy-iis.md's site folder) is this test's copy.
    const here = (value: string) =>
      posix(value.replaceAll(IIS_SITE, site!).replaceAll(posix(IIS_SITE), site!));
    const vars = hp.pairs(`${WS}/httpPlatform/environmentVariables/environmentVariable`);
    const launch = (port: number): Launch => {
      const env: Record<string, string> = {};
      for (const [name, value] of Object.entries(vars)) {
        env[name] = here(value.replaceAll('%HTTP_PLATFORM_PORT%', String(port)));
      }
      return {
        command: process.execPath, // processPath: node.exe
        args: [here(hp.xpath(`${WS}/httpPlatform/@arguments`))],
        // Microsoft does not say which folder node.exe starts in: not the site.
        cwd: tmpdir(),
        env: { ...baseEnv(), ...env },
      };
    };
    const started = await startOnFreePort(launch);
    chat = started.chat;
    expect(chat.url).toBe(`http://127.0.0.1:${started.port}`);
    await expectAnswers(chat.url);
    expect(existsSync(join(site, 'data', 'chat.sqlite'))).toBe(true);
  });

  it('iisnode: require() of iisnode-entry.cjs with the appSettings, a pipe path in PORT', async () => {
    site = await siteFolder([IISNODE, IISNODE_ENTRY]);
    const ii = iisConfig(IISNODE);
    const socketPath = join(site, 'iisnode.sock'); // iisnode: \\.\pipe\<guid>
    chat = await startChatProcess({
      // iisnode's interceptor loads the handler's file with require().
      command: process.execPath,
      args: ['-e', 'require(process.argv[1])', join(site, 'iisnode-entry.cjs')],
      // Not the site: the entry moves there itself.
      cwd: tmpdir(),
      env: {
        ...baseEnv(),
        ...ii.pairs('/configuration/appSettings/add', 'key'),
        NODE_ENV: ii.xpath(`${WS}/iisnode/@node_env`),
        PORT: socketPath,
      },
    });
    expect(chat.url).toBe(socketPath);
    await expectAnswers('http://localhost', socketPath);
    expect(existsSync(join(site, 'data', 'chat.sqlite'))).toBe(true);
  });
});
