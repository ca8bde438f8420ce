/**
 * Refuses a `POST /send` that another site's page makes (403 `cross_site`).
 *
 * A form on evil.example can post to the chat with the visitor's browser;
 * JSON cannot (it needs a CORS preflight we never grant), but a form can.
 * Browsers tell us who is asking:
 * - `Sec-Fetch-Site` (every current browser): only `same-origin` and `none`
 *   (typed or bookmarked by the user) pass.
 * - else `Origin`: its host must be the host the request came to, or listed
 *   in `ALLOWED_ORIGINS`.
 * - neither header: not a browser that could be tricked (curl, the 2011
 *   client in an old browser), so it passes.
 * Listed origins pass in every case.
 */
import type { IncomingMessage } from 'node:http';
import type { HostOf } from '../core/client-address.ts';
import { httpError } from '../core/errors.ts';

/** What the check reads from a request. */
export interface SiteHeaders {
  origin: string | undefined;
  secFetchSite: string | undefined;
  /** The host the request came to (as `req.host`: X-Forwarded-Host only when `TRUST_PROXY` says so). */
  host: string | undefined;
}

/** Whether a request with these headers comes from our own site (or a listed origin). */
export function isSameSite(headers: SiteHeaders, allowed: ReadonlySet<string>): boolean {
  const { origin, secFetchSite: site, host } = headers;
  if (origin !== undefined && allowed.has(origin)) return true;
  if (site !== undefined) return site === 'same-origin' || site === 'none';
  if (origin === undefined) return true;
  return URL.canParse(origin) && new URL(origin).host === host;
}

export function createCrossSiteCheck(allowedOrigins: readonly string[], hostOf: HostOf) {
  const allowed = new Set(allowedOrigins.map((origin) => new URL(origin).origin));
  return function checkSameSite(req: IncomingMessage): void {
    const headers = {
      origin: req.headers.origin,
      // A string: Node joins a repeated header with ", ", as Express's req.get reads it.
      secFetchSite: req.headers['sec-fetch-site'] as string | undefined,
      host: hostOf(req),
    };
    if (!isSameSite(headers, allowed)) throw httpError('cross_site');
  };
}
