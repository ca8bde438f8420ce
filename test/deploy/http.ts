/**
 * A small HTTP client over `node:http`, for what `fetch` cannot do: send from
 * a chosen loopback address (`localAddress`, so nginx sees distinct
 * visitors), talk over a Unix socket (`socketPath`), and set headers a
 * browser would (`Sec-Fetch-Site`, `Origin`) without fetch's own rules.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface HttpOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Connect from this local address (e.g. 127.0.0.2). */
  localAddress?: string;
  /** Connect to this Unix socket instead of the URL's host and port. */
  socketPath?: string;
  signal?: AbortSignal;
}

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json<T = unknown>(): T;
}

export function http(url: string, options: HttpOptions = {}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: options.method ?? 'GET',
        headers: options.headers,
        localAddress: options.localAddress,
        socketPath: options.socketPath,
        signal: options.signal,
        agent: false, // A fresh connection per request: no pooled socket outlives the test.
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: <T>() => JSON.parse(text) as T,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** `POST path` with a JSON body. */
export function postJson(
  url: string,
  body: unknown,
  options: Omit<HttpOptions, 'method' | 'body'> = {},
): Promise<HttpAnswer> {
  return http(url, {
    ...options,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: JSON.stringify(body),
  });
}
