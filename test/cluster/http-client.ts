/**
 * Small HTTP helpers for the scale-out tests.
 *
 * `pinnedClient(url)` sends every request over one keep-alive connection. A
 * cluster hands each connection to one worker, so all of a pinned client's
 * requests reach the same worker: the way to put a waiting poll on one
 * worker and the send on another.
 */
import { Agent, request } from 'node:http';
import { vi } from 'vitest';
import type { RecvBody, SendBody } from '../helpers/chat.ts';

export interface HttpAnswer {
  status: number;
  body: unknown;
}

export interface ChatClient {
  get(path: string, signal?: AbortSignal): Promise<HttpAnswer>;
  post(path: string, body: unknown): Promise<HttpAnswer>;
  recv(query: string, signal?: AbortSignal): Promise<RecvBody>;
  send(fields: Record<string, string>): Promise<SendBody>;
  pid(): Promise<number>;
  close(): void;
}

/** `base` is `http://host:port`, or the path of a Unix socket the server listens on. */
export function chatClient(base: string, options: { pinned?: boolean } = {}): ChatClient {
  const socketPath = base.startsWith('http') ? undefined : base;
  const origin = socketPath ? 'http://localhost' : base;
  const agent = new Agent({ keepAlive: true, maxSockets: options.pinned ? 1 : 64 });

  function call(method: string, path: string, payload?: unknown, signal?: AbortSignal) {
    return new Promise<HttpAnswer>((resolve, reject) => {
      const body = payload === undefined ? undefined : JSON.stringify(payload);
      const req = request(
        new URL(path, origin),
        {
          method,
          agent,
          socketPath,
          signal,
          headers: body ? { 'content-type': 'application/json' } : {},
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
          });
          res.on('end', () => {
            try {
              resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
            } catch (error) {
              reject(error);
            }
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  async function ok<T>(answer: Promise<HttpAnswer>, what: string): Promise<T> {
    const { status, body } = await answer;
    if (status !== 200) throw new Error(`${what}: ${status} ${JSON.stringify(body)}`);
    return body as T;
  }

  return {
    get: (path, signal) => call('GET', path, undefined, signal),
    post: (path, body) => call('POST', path, body),
    recv: (query, signal) =>
      ok(call('GET', `/recv?${query}`, undefined, signal), `GET /recv?${query}`),
    send: (fields) => ok(call('POST', '/send', fields), 'POST /send'),
    pid: async () => (await ok<{ pid: number }>(call('GET', '/health'), 'GET /health')).pid,
    close: () => agent.destroy(),
  };
}

/**
 * Resolves once `waiting` reaches `count` in `/health`: the polls are
 * registered, not just sent. Asked every 10 ms by `vi.waitFor`, not in a tight loop.
 */
export async function untilWaiting(
  client: ChatClient,
  count: number,
  timeoutMs = 10_000,
): Promise<void> {
  await vi.waitFor(
    async () => {
      const { body } = await client.get('/health');
      const waiting = (body as { waiting: number }).waiting;
      if (waiting < count) throw new Error(`${waiting} of ${count} polls waiting`);
    },
    { timeout: timeoutMs, interval: 10 },
  );
}
