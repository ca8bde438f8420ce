/**
 * Where `GET /metrics` is answered: on the chat's own port (a route of the
 * app), or, with `METRICS_PORT`, on a port of its own that the proxies never
 * reach (in a cluster, the primary's: server/metrics/cluster-metrics.ts).
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { RequestHandler } from 'express';
import type { Log } from '../core/log.ts';

/**
 * The API's security headers (server/http/headers.ts, `JSON_HEADERS`) on the
 * metrics too, and a CSP that forbids everything: the text is never a page.
 */
export const METRICS_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

/** The Prometheus text of whatever is measured: this process, or the whole cluster. */
export interface MetricsSource {
  render(): Promise<string>;
  readonly contentType: string;
}

/** `GET /metrics` as a route of the chat's app. */
export function metricsRoute(source: MetricsSource): RequestHandler {
  return async (_req, res) => {
    const text = await source.render();
    res.set(METRICS_HEADERS).set('Content-Type', source.contentType).send(text);
  };
}

/** A small server answering `GET /metrics` only, on `port` (0 for any). */
export async function listenMetrics(
  source: MetricsSource,
  port: number,
  host: string | undefined,
  log: Log,
): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { ...METRICS_HEADERS, 'Content-Type': 'application/json' });
      res.end('{"error":{"code":"not_found","message":"Only GET /metrics is served here."}}');
      return;
    }
    source.render().then(
      (text) => {
        res.writeHead(200, { ...METRICS_HEADERS, 'Content-Type': source.contentType });
        res.end(text);
      },
      (error: unknown) => {
        log('warn', 'metrics: cannot collect them', error);
        res.writeHead(503, {
          ...METRICS_HEADERS,
          'Content-Type': 'application/json',
          'Retry-After': '5',
        });
        res.end(
          '{"error":{"code":"metrics_unavailable","message":"Metrics cannot be collected now."}}',
        );
      },
    );
  });
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}

/** The port a server listens on (for logs and tests). */
export function portOf(server: Server): number {
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
}
