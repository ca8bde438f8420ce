/**
 * The public API's routes and the methods each accepts: the one list that
 * `app.ts` registers (each route, then a 405 for any other method) and that
 * the deploy tests hold the proxy configurations to (web.config, the nginx
 * files), so a route added here and not to a proxy fails a test instead of
 * answering 404 in production.
 *
 * `/metrics` is deliberately not here: it is for operators, and the shipped
 * proxies must not expose it.
 */
export const API_ROUTES = [
  { path: '/send', allow: 'POST' },
  { path: '/typing', allow: 'POST' },
  { path: '/recv', allow: 'GET, HEAD' },
  { path: '/history', allow: 'GET, HEAD' },
  { path: '/time', allow: 'GET, HEAD' },
  { path: '/health', allow: 'GET, HEAD' },
  { path: '/ready', allow: 'GET, HEAD' },
] as const;

export type ApiPath = (typeof API_ROUTES)[number]['path'];
