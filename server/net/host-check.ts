/**
 * `ALLOWED_HOSTS`: the host names this chat answers for. A page on another
 * site that rebinds its own name to the chat's address (DNS rebinding)
 * still sends its own name in `Host`; with the list set, such a request is
 * refused with 421 `host_not_allowed` before any route sees it. The host is
 * the one Express reads (`X-Forwarded-Host` from a trusted proxy, else
 * `Host`), without its port. `*.example.org` allows every subdomain of
 * example.org. Unset, every host is answered, as before.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
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

/** `listener` behind the Host checks: present on HTTP/1.1, and in `allowed` when that is not empty. */
export function checkHost(
  listener: RequestListener,
  allowed: readonly string[],
  trustProxy: Config['trustProxy'],
): RequestListener {
  const present: RequestListener = (req, res) => {
    if (req.headers.host === undefined && req.httpVersion === '1.1') {
      res.setHeader('Connection', 'close');
      writeError(res, httpError('bad_request', 'HTTP/1.1 requires a Host header.'));
      return;
    }
    listener(req, res);
  };
  if (allowed.length === 0) return present;
  const hostOf = clientHost(trustProxy);
  const exact = new Set(allowed.filter((host) => !host.startsWith('*.')));
  const suffixes = allowed.filter((host) => host.startsWith('*.')).map((host) => host.slice(1));
  const isAllowed = (host: string): boolean =>
    exact.has(host) || suffixes.some((suffix) => host.endsWith(suffix));
  return (req: IncomingMessage, res: ServerResponse) => {
    const host = hostName(hostOf(req));
    if (host !== undefined && isAllowed(host)) return present(req, res);
    writeError(res, httpError('host_not_allowed'));
  };
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
