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
import type { Request } from 'express';
import { httpError } from '../errors.ts';

export function createCrossSiteCheck(allowedOrigins: readonly string[]) {
  const allowed = new Set(allowedOrigins.map((origin) => new URL(origin).origin));
  return function checkSameSite(req: Request): void {
    const origin = req.get('origin');
    if (origin !== undefined && allowed.has(origin)) return;
    const site = req.get('sec-fetch-site');
    if (site !== undefined) {
      if (site === 'same-origin' || site === 'none') return;
      throw httpError('cross_site');
    }
    if (origin === undefined) return;
    // `req.host` honours X-Forwarded-Host only when `trust proxy` says so.
    if (URL.canParse(origin) && new URL(origin).host === req.host) return;
    throw httpError('cross_site');
  };
}
