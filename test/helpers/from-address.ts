/**
 * HTTP requests from a chosen loopback address (127.0.0.2 is another client
 * than 127.0.0.1), on keep-alive connections of an agent per address.
 */
import { Agent, request } from 'node:http';

export interface AddressAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface FromAddress {
  (
    method: string,
    path: string,
    options?: { body?: string; headers?: Record<string, string> },
  ): Promise<AddressAnswer>;
  close(): void;
}

/** `maxSockets`: connections at once (8, as a browser per host; more to hold many polls). */
export function fromAddress(url: string, localAddress: string, maxSockets = 8): FromAddress {
  const agent = new Agent({ keepAlive: true, maxSockets, localAddress });
  const { hostname, port } = new URL(url);
  const send: FromAddress = Object.assign(
    (
      method: string,
      path: string,
      options: { body?: string; headers?: Record<string, string> } = {},
    ) =>
      new Promise<AddressAnswer>((resolve, reject) => {
        const req = request(
          { agent, host: hostname, port, method, path, headers: options.headers },
          (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              body += chunk;
            });
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, headers: res.headers, body }),
            );
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(options.body);
      }),
    { close: () => agent.destroy() },
  );
  return send;
}
