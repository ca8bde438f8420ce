/**
 * The request's target and host, checked before any route sees it.
 *
 * - **Absolute-form targets** (`GET http://host/recv HTTP/1.1`, RFC 9112,
 *   3.2.2): routed by their path like any other, on every route. The
 *   target's authority is the host the request names, in place of `Host`,
 *   as that section says a server must do.
 * - **One `Host`**: HTTP/1.1 requires it (RFC 9112, 3.2), and a request
 *   with two is invalid (400): Node would keep the first and drop the
 *   other, while a proxy in front may have read the second.
 * - **`ALLOWED_HOSTS`**: the host names this chat answers for. A page on
 *   another site that rebinds its own name to the chat's address (DNS
 *   rebinding) still sends its own name in `Host`; with the list set, such
 *   a request is refused with 421 `host_not_allowed`. The host is the one
 *   Express reads (`X-Forwarded-Host` from a trusted proxy, else `Host`),
 *   without its port. `*.example.org` allows every subdomain of
 *   example.org.
 * - **Loopback by default**: with `ALLOWED_HOSTS` unset, a chat bound to a
 *   loopback address (`HOST=127.0.0.1`, `::1`, `localhost`) with no proxy
 *   in front (`TRUST_PROXY` off) answers only `localhost` and loopback
 *   names and addresses, and refuses a request whose `Origin` is another
 *   site's (403 `cross_site`, unless `ALLOWED_ORIGINS` lists it): then a
 *   browser on the machine is its one client, and the one a rebinding page
 *   can use to reach it. Behind a proxy on the machine (`TRUST_PROXY` set,
 *   as every shipped configuration does) the proxy's visitors name the
 *   site, not loopback: those chats answer every host unless
 *   `ALLOWED_HOSTS` is set, which the deploy guides say to do. Bound
 *   elsewhere and unset, every host is answered, as before.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { clientHost } from '../core/client-address.ts';
import type { Config } from '../core/config.ts';
import { httpError } from '../core/errors.ts';
import { writeError } from '../http/answer.ts';

/**
 * HTTP/1.1 requires `Host` (RFC 9112, 3.2). Node checks it itself, with a
 * bare 400 (`requireHostHeader`): the server turns that off
 * (`HOST_CHECK_SERVER_OPTIONS`) and it is checked here, with a JSON 400.
 */
export const HOST_CHECK_SERVER_OPTIONS = { requireHostHeader: false } as const;

export type HostCheckConfig = Pick<
  Config,
  'allowedHosts' | 'allowedOrigins' | 'trustProxy' | 'host' | 'port'
>;

/** `listener` behind the target and Host checks (the module comment). */
export function checkHost(listener: RequestListener, config: HostCheckConfig): RequestListener {
  const isAllowed = allowedHosts(config);
  const hostOf = clientHost(config.trustProxy);
  // Only with the loopback default: an explicit list is the operator's word.
  const checkOrigin = config.allowedHosts.length === 0;
  const origins = new Set(config.allowedOrigins.map((origin) => new URL(origin).origin));
  return (req: IncomingMessage, res: ServerResponse) => {
    if (!toOriginForm(req)) return refuse(res, 'The request target is not a URL.');
    if (req.headers.host === undefined && req.httpVersion === '1.1') {
      return refuse(res, 'HTTP/1.1 requires a Host header.');
    }
    if (hostHeaders(req) > 1) return refuse(res, 'A request has one Host header.');
    if (isAllowed !== undefined) {
      const host = hostName(hostOf(req));
      if (host === undefined || !isAllowed(host)) {
        return writeError(res, httpError('host_not_allowed'));
      }
      const origin = req.headers.origin;
      if (checkOrigin && origin !== undefined && !origins.has(origin)) {
        const from = URL.canParse(origin) ? new URL(origin).hostname : undefined;
        if (from === undefined || !isAllowed(from)) return writeError(res, httpError('cross_site'));
      }
    }
    listener(req, res);
  };
}

/**
 * Which hosts are answered: the `ALLOWED_HOSTS` list, else loopback names
 * when the chat is bound to loopback with no proxy in front; undefined: any.
 */
export function allowedHosts(config: HostCheckConfig): ((host: string) => boolean) | undefined {
  if (config.allowedHosts.length > 0) {
    const exact = new Set(config.allowedHosts.filter((host) => !host.startsWith('*.')));
    const suffixes = config.allowedHosts
      .filter((host) => host.startsWith('*.'))
      .map((host) => host.slice(1));
    return (host) => exact.has(host) || suffixes.some((suffix) => host.endsWith(suffix));
  }
  const alone = typeof config.port === 'number' && isLoopback(config.host) && !config.trustProxy;
  return alone ? isLoopback : undefined;
}

/** `localhost`, `*.localhost` (RFC 6761), 127.0.0.0/8, `::1` (bracketed or not). */
export function isLoopback(host: string | undefined): boolean {
  if (host === undefined) return false;
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (isIP(name) === 4) return name.startsWith('127.');
  return name === '::1' || name === '0:0:0:0:0:0:0:1';
}

/**
 * An absolute-form target becomes its path and query, and its authority
 * the request's `Host`; false when it does not parse. Any other target is
 * left as it is.
 */
function toOriginForm(req: IncomingMessage): boolean {
  const url = req.url ?? '';
  if (url.charCodeAt(0) === 47 /* "/" */ || !/^https?:\/\//i.test(url)) return true;
  if (!URL.canParse(url)) return false;
  const target = new URL(url);
  req.url = target.pathname + target.search;
  req.headers.host = target.host;
  return true;
}

/** How many `Host` lines the request had (Node keeps only the first in `headers`). */
function hostHeaders(req: IncomingMessage): number {
  const raw = req.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') count += 1;
  }
  return count;
}

function refuse(res: ServerResponse, message: string): void {
  res.setHeader('Connection', 'close');
  writeError(res, httpError('bad_request', message));
}

/** `Host` without its port, lower case: `[::1]:3000` → `[::1]`, `Chat.Example:80` → `chat.example`. */
export function hostName(host: string | undefined): string | undefined {
  if (!host) return undefined;
  const value = host.trim().toLowerCase();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    return end < 0 ? undefined : value.slice(0, end + 1);
  }
  const colon = value.indexOf(':');
  return colon < 0 ? value : value.slice(0, colon);
}
