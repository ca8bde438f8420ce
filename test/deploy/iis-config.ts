/**
 * Reading an IIS web.config without IIS: XPath 1.0 over the parsed file, and
 * a replay of its URL Rewrite rules and handler mappings the way IIS applies
 * them, to tell which URLs reach Node and which IIS serves itself.
 *
 * The XPath runs in this process (`xpath` over `@xmldom/xmldom`), not in an
 * `xmllint --xpath` per expression: the replay asks a few hundred of them,
 * and each spawn from the test worker blocked its event loop for tens of
 * milliseconds. xmllint still checks that each file is well formed
 * (web-config.test.ts), and the parser here refuses a file that is not.
 */
import { readFileSync } from 'node:fs';
import { DOMParser } from '@xmldom/xmldom';
import xpath from 'xpath';

export interface IisConfig {
  readonly path: string;
  /** The string value of an XPath expression ('' when nothing matches). */
  xpath(expression: string): string;
  count(expression: string): number;
  /** The string value of every node `expression` selects. */
  all(expression: string): string[];
  /** The `name → value` pairs of `<add>` elements under `parent` (keyAttr: `name` or `key`). */
  pairs(parent: string, keyAttr?: string, valueAttr?: string): Record<string, string>;
}

export function iisConfig(path: string): IisConfig {
  const document = new DOMParser({
    onError: (level, message) => {
      // A warning (say, an unusual but legal construct) is no reason to stop.
      if (level !== 'warning') throw new Error(`${path}: not well-formed XML: ${message}`);
    },
  }).parseFromString(readFileSync(path, 'utf8'), 'text/xml');
  const value = (expression: string) => {
    const result = xpath.select(`string(${expression})`, document as unknown as Node);
    if (typeof result !== 'string') throw new Error(`string(${expression}) gave no string`);
    return result;
  };
  const count = (expression: string) => Number(value(`count(${expression})`));
  const all = (expression: string) =>
    Array.from({ length: count(expression) }, (_, i) => value(`(${expression})[${i + 1}]`));
  return {
    path,
    xpath: value,
    count,
    all,
    pairs(parent, keyAttr = 'name', valueAttr = 'value') {
      const keys = all(`${parent}/@${keyAttr}`);
      return Object.fromEntries(
        keys.map((key) => [key, value(`${parent}[@${keyAttr}="${key}"]/@${valueAttr}`)]),
      );
    },
  };
}

interface Rule {
  name: string;
  pattern: RegExp;
  negate: boolean;
  action: string;
  url: string;
  stop: boolean;
  /** `<serverVariables><set name value>`: what the rule sets when it matches. */
  sets: { name: string; value: string }[];
}

function readRules(config: IisConfig): Rule[] {
  const rules = '/configuration/system.webServer/rewrite/rules/rule';
  return Array.from({ length: config.count(rules) }, (_, i) => {
    const rule = `${rules}[${i + 1}]`;
    if (config.count(`${rule}/conditions/add`) > 0) {
      throw new Error('rules with conditions: teach this replay to evaluate them');
    }
    // URL Rewrite's defaults: ECMAScript patterns, ignoreCase="true".
    const ignoreCase = config.xpath(`${rule}/match/@ignoreCase`) !== 'false';
    return {
      name: config.xpath(`${rule}/@name`),
      pattern: new RegExp(config.xpath(`${rule}/match/@url`), ignoreCase ? 'i' : ''),
      negate: config.xpath(`${rule}/match/@negate`) === 'true',
      action: config.xpath(`${rule}/action/@type`),
      url: config.xpath(`${rule}/action/@url`),
      stop: config.xpath(`${rule}/@stopProcessing`) === 'true',
      sets: config.all(`${rule}/serverVariables/set/@name`).map((name) => ({
        name,
        value: config.xpath(`${rule}/serverVariables/set[@name="${name}"]/@value`),
      })),
    };
  });
}

export type Handler = 'node' | 'iis-static';

/** An IIS handler `path`: `*`, `*.ext` or a file name, matched against the URL's last segment. */
function handlerMatches(handlerPath: string, url: string): boolean {
  const name = url.slice(url.lastIndexOf('/') + 1);
  const pattern = handlerPath.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${pattern}$`, 'i').test(name);
}

/**
 * Where IIS sends a request: the rules run in order on the path without its
 * leading slash and query; the handler is then chosen for the (rewritten)
 * URL among the Node handlers the site adds, minus those a <location>
 * holding the URL removes. No Node handler left: IIS's StaticFile handler.
 */
export interface Routed {
  url: string;
  handler: Handler;
  /** The server variables the matching rules set, values unexpanded (`{REMOTE_ADDR}`). */
  sets: { name: string; value: string }[];
}

export function router(config: IisConfig): (path: string) => Routed {
  const rules = readRules(config);
  const handlers = config.all('/configuration/system.webServer/handlers/add/@name').map((name) => ({
    name,
    path: config.xpath(`/configuration/system.webServer/handlers/add[@name="${name}"]/@path`),
  }));
  const locations = config.all('/configuration/location/@path');
  const removedAt = (url: string) =>
    new Set(
      locations
        .filter((path) => url === path || url.startsWith(`${path}/`))
        .flatMap((path) =>
          config.all(
            `/configuration/location[@path="${path}"]/system.webServer/handlers/remove/@name`,
          ),
        ),
    );
  return (path) => {
    let url = path.replace(/^\//, '').replace(/\?.*$/, '');
    const sets: Routed['sets'] = [];
    for (const rule of rules) {
      const match = rule.pattern.exec(url);
      if ((match !== null) === rule.negate) continue;
      sets.push(...rule.sets);
      if (rule.action === 'Rewrite') {
        url = rule.url.replace(/\{R:(\d)\}/g, (_, n: string) => match?.[Number(n)] ?? '');
      } else if (rule.action !== 'None') {
        throw new Error(`rule "${rule.name}": action ${rule.action} is not replayed here`);
      }
      if (rule.stop) break;
    }
    const removed = removedAt(url);
    const node = handlers.some((h) => !removed.has(h.name) && handlerMatches(h.path, url));
    return { url, handler: node ? 'node' : 'iis-static', sets };
  };
}

/** What a visitor's request is to IIS: its address, and its headers (lower-case names). */
export interface VisitorRequest {
  path: string;
  remoteAddr: string;
  headers: Record<string, string>;
}

/**
 * The headers Node gets for a request, replayed as IIS builds them: URL
 * Rewrite's `HTTP_*` server variables replace the request header of that name
 * (`HTTP_X_FORWARDED_FOR` is `x-forwarded-for`), with `{REMOTE_ADDR}` and
 * `{HTTP_HOST}` expanded; then, under iisnode with enableXFF on, its own
 * X-Forwarded-For append (`iisnodeAppendXff`).
 */
export function headersToNode(config: IisConfig, request: VisitorRequest): Record<string, string> {
  const headers = { ...request.headers };
  const expand = (value: string) =>
    value
      .replaceAll('{REMOTE_ADDR}', request.remoteAddr)
      .replaceAll('{HTTP_HOST}', request.headers.host ?? '');
  for (const { name, value } of router(config)(request.path).sets) {
    if (!name.startsWith('HTTP_')) throw new Error(`server variable ${name} is not replayed here`);
    headers[name.slice(5).toLowerCase().replaceAll('_', '-')] = expand(value);
  }
  if (config.xpath('/configuration/system.webServer/iisnode/@enableXFF') === 'true') {
    headers['x-forwarded-for'] = iisnodeAppendXff(headers['x-forwarded-for'], request.remoteAddr);
  }
  return headers;
}

/**
 * iisnode's enableXFF, as its source does it: the remote address is appended
 * to X-Forwarded-For unless the header already ends with the same
 * characters. So a visitor at 1.2.3.4 who sends `11.2.3.4` gets no append,
 * and the last entry, which the chat trusts, is the one it chose.
 */
export function iisnodeAppendXff(header: string | undefined, remoteAddr: string): string {
  if (header === undefined || header === '') return remoteAddr;
  return header.endsWith(remoteAddr) ? header : `${header}, ${remoteAddr}`;
}
