/**
 * The header policy, one for every answer: helmet's, computed once per kind
 * of answer rather than by running helmet on each request.
 *
 * - `DOCUMENT_HEADERS`: all of helmet's headers (CSP, framing, referrer,
 *   HSTS…), for the page and its files, which a browser renders.
 * - `JSON_HEADERS`: the API's JSON answers, on whichever route and whichever
 *   way the request came (server/http/lane.ts). Of helmet's headers only two
 *   mean anything on JSON read by XHR: no MIME sniffing, no cross-origin
 *   no-cors reads; the rest act on documents. Few header lines per answer
 *   also keep a delivery cheap (docs/design.md, "The request pipeline").
 */
import type { ServerResponse } from 'node:http';
import helmet from 'helmet';

/**
 * helmet's default CSP: scripts only from our own origin, no inline script.
 * Without `upgrade-insecure-requests`, which breaks a chat served over plain
 * HTTP on a LAN address (the browser asks for its scripts over HTTPS).
 */
const HELMET_OPTIONS = { contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } };

/** helmet's headers, as it sets them: its middleware run once against a recorder. */
function helmetHeaders(): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader(name: string, value: unknown) {
      headers[name] = String(value);
    },
    removeHeader(name: string) {
      delete headers[name];
    },
  };
  // With the default options helmet's headers depend on nothing of the request.
  helmet(HELMET_OPTIONS)({} as never, recorder as never, () => {});
  return Object.freeze(headers);
}

export const DOCUMENT_HEADERS = helmetHeaders();

const helmetOf = (name: string): string => {
  const value = DOCUMENT_HEADERS[name];
  if (value === undefined) throw new Error(`helmet no longer sets ${name}`);
  return value;
};

/** The headers of every JSON answer. */
export const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Type': 'application/json; charset=utf-8',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': helmetOf('X-Content-Type-Options'),
  'Cross-Origin-Resource-Policy': helmetOf('Cross-Origin-Resource-Policy'),
});

/** Sets `headers` on an answer not yet written (Express routes; writeHead merges them). */
export function setHeaders(res: ServerResponse, headers: Readonly<Record<string, string>>): void {
  for (const name in headers) res.setHeader(name, headers[name]!);
}
