/**
 * web.config, checked without IIS (none runs on Linux): it must be
 * well-formed XML, and replaying its URL Rewrite rules and handler mappings
 * the way IIS applies them must send exactly the API routes to Node (Helicon
 * Zoo) and every other URL to IIS's static files under public/.
 *
 * Read with `xmllint --xpath` (Debian's libxml2-utils), the same tool that
 * checks the file is well formed.
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiRoutes } from './api-routes.ts';

const WEB_CONFIG = new URL('../../web.config', import.meta.url).pathname;

/** The string value of an XPath expression over web.config (xmllint ends it with a newline). */
function xpath(expression: string): string {
  const out = execFileSync('xmllint', ['--xpath', `string(${expression})`, WEB_CONFIG], {
    encoding: 'utf8',
  });
  return out.replace(/\n$/, '');
}

function count(expression: string): number {
  return Number(xpath(`count(${expression})`));
}

function all(expression: string): string[] {
  return Array.from({ length: count(expression) }, (_, i) => xpath(`(${expression})[${i + 1}]`));
}

interface Rule {
  name: string;
  pattern: RegExp;
  negate: boolean;
  action: string;
  url: string;
  stop: boolean;
}

function readRules(): Rule[] {
  const rules = '/configuration/system.webServer/rewrite/rules/rule';
  return Array.from({ length: count(rules) }, (_, i) => {
    const rule = `${rules}[${i + 1}]`;
    if (count(`${rule}/conditions/add`) > 0) {
      throw new Error('rules with conditions: teach this replay to evaluate them');
    }
    // URL Rewrite's defaults: ECMAScript patterns, ignoreCase="true".
    const ignoreCase = xpath(`${rule}/match/@ignoreCase`) !== 'false';
    return {
      name: xpath(`${rule}/@name`),
      pattern: new RegExp(xpath(`${rule}/match/@url`), ignoreCase ? 'i' : ''),
      negate: xpath(`${rule}/match/@negate`) === 'true',
      action: xpath(`${rule}/action/@type`),
      url: xpath(`${rule}/action/@url`),
      stop: xpath(`${rule}/@stopProcessing`) === 'true',
    };
  });
}

type Handler = 'node' | 'iis-static';

/**
 * Where IIS sends a request path: the rules run in order on the path without
 * its leading slash; the handler is then chosen for the (rewritten) URL, and a
 * <location> removing the Node handlers leaves it to IIS's StaticFile handler.
 */
function route(path: string, rules: Rule[]): { url: string; handler: Handler } {
  let url = path.replace(/^\//, '').replace(/\?.*$/, '');
  for (const rule of rules) {
    const match = rule.pattern.exec(url);
    if ((match !== null) === rule.negate) continue;
    if (rule.action === 'Rewrite') {
      url = rule.url.replace(/\{R:(\d)\}/g, (_, n: string) => match?.[Number(n)] ?? '');
    } else if (rule.action !== 'None') {
      throw new Error(`rule "${rule.name}": action ${rule.action} is not replayed here`);
    }
    if (rule.stop) break;
  }
  return { url, handler: nodeHandlersRemovedAt(url) ? 'iis-static' : 'node' };
}

const nodeHandlers = () => all('/configuration/system.webServer/handlers/add/@name');

/** Whether the <location> that holds `url` (the deepest one) removes every Node handler. */
function nodeHandlersRemovedAt(url: string): boolean {
  const locations = all('/configuration/location/@path')
    .filter((path) => url === path || url.startsWith(`${path}/`))
    .sort((a, b) => a.length - b.length);
  const removed = new Set(
    locations.flatMap((path) =>
      all(`/configuration/location[@path="${path}"]/system.webServer/handlers/remove/@name`),
    ),
  );
  return nodeHandlers().every((name) => removed.has(name));
}

describe('web.config', () => {
  it('is well-formed XML (xmllint)', async () => {
    await expect(promisify(execFile)('xmllint', ['--noout', WEB_CONFIG])).resolves.toBeDefined();
  });

  describe('routing', () => {
    let rules: Rule[];
    let api: string[];

    beforeAll(async () => {
      rules = readRules();
      api = await apiRoutes();
    });

    it('sends every route of the chat app to Node, unchanged', () => {
      expect(api).toEqual(['/health', '/history', '/recv', '/send', '/time']);
      for (const path of api) {
        expect({ path, ...route(`${path}?room=main&since=3`, rules) }).toEqual({
          path,
          url: path.slice(1),
          handler: 'node',
        });
      }
    });

    it('leaves the page and its assets to IIS, from public/', () => {
      expect(route('/', rules)).toEqual({ url: 'public/', handler: 'iis-static' });
      expect(route('/index.html', rules)).toEqual({
        url: 'public/index.html',
        handler: 'iis-static',
      });
      expect(route('/assets/index-abc123.js', rules)).toEqual({
        url: 'public/assets/index-abc123.js',
        handler: 'iis-static',
      });
    });

    it('never hands Node or the web anything outside public/', () => {
      for (const path of [
        '/web.config',
        '/package.json',
        '/dist/server/main.js',
        '/data/chat.sqlite',
        '/node_modules/express/package.json',
        '/sendx',
        '/send/more',
        '/api/send',
      ]) {
        const { url, handler } = route(path, rules);
        expect({ path, handler, inPublic: url.startsWith('public/') }).toEqual({
          path,
          handler: 'iis-static',
          inPublic: true,
        });
      }
    });
  });

  describe('Helicon Zoo', () => {
    const app = '/configuration/system.webServer/heliconZoo/application';
    const env = (name: string) => xpath(`${app}/environmentVariables/add[@name="${name}"]/@value`);

    it('names its handlers after the application, one per bitness', () => {
      const name = xpath(`${app}/@name`);
      expect(nodeHandlers().sort()).toEqual([`${name}#x64`, `${name}#x86`]);
      expect(all('/configuration/system.webServer/handlers/add/@modules').sort()).toEqual([
        'HeliconZoo_x64',
        'HeliconZoo_x86',
      ]);
    });

    it('runs the built entry point with static files left to IIS', () => {
      expect(env('APP_WORKER')).toMatch(/\\dist\\server\\main\.js$/);
      expect(env('SERVE_STATIC')).toBe('false');
      expect(env('NODE_ENV')).toBe('production');
    });

    it('trusts IIS as the one proxy hop, and lets Zoo manage the processes', () => {
      expect(env('TRUST_PROXY')).toBe('1');
      expect(env('WORKERS')).toBe('1');
    });
  });

  describe('limits and caching', () => {
    it('caps bodies above the chat’s own 16 KB, so the chat answers 413 in JSON', () => {
      const max = Number(
        xpath(
          '/configuration/system.webServer/security/requestFiltering/requestLimits/@maxAllowedContentLength',
        ),
      );
      expect(max).toBeGreaterThan(16 * 1024);
      expect(max).toBeLessThanOrEqual(64 * 1024);
    });

    it('passes the chat’s JSON errors through', () => {
      expect(xpath('/configuration/system.webServer/httpErrors/@existingResponse')).toBe(
        'PassThrough',
      );
    });

    it('revalidates index.html on every load and caches hashed assets for a year', () => {
      const cache = (path: string, attribute: string) =>
        xpath(
          `/configuration/location[@path="${path}"]/system.webServer/staticContent/clientCache/@${attribute}`,
        );
      expect(cache('public', 'cacheControlMode')).toBe('DisableCache');
      expect(cache('public/assets', 'cacheControlMode')).toBe('UseMaxAge');
      expect(cache('public/assets', 'cacheControlMaxAge')).toBe('365.00:00:00');
      expect(cache('public/assets', 'cacheControlCustom')).toContain('immutable');
    });
  });
});
