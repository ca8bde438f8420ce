/**
 * The HTTP client of the tests and the soak: one chat server's routes over
 * keep-alive connections, answers parsed.
 *
 * `chatClient(url, { pinned: true })` sends every request over one
 * keep-alive connection. A cluster hands each connection to one worker, so
 * all of a pinned client's requests reach the same worker: the way to put a
 * waiting poll on one worker and the send on another.
 */
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import type { RecvBody, SendBody } from './chat.ts';
import type { ServerProcess } from './processes.ts';
import { until } from './wait.ts';

export interface HttpAnswer {
  status: number;
  /** The parsed JSON; undefined for another type (`text` has it). */
  body: unknown;
  text: string;
}

export interface ChatClient {
  get(path: string, signal?: AbortSignal): Promise<HttpAnswer>;
  post(path: string, body: unknown): Promise<HttpAnswer>;
  recv(query: string, signal?: AbortSignal): Promise<RecvBody>;
  send(fields: Record<string, string>): Promise<SendBody>;
  /** The text of a 200 answer (`/metrics`). */
  text(path: string): Promise<string>;
  pid(): Promise<number>;
  close(): void;
}

/**
 * `base` is `http://host:port`, or the path of a Unix socket the server listens on.
 * `pid()` needs the server process (`log`), whose request log names the pid.
 */
export function chatClient(
  base: string,
  options: {
    pinned?: boolean;
    /** Connections at once (not pinned). @default 64 */
    maxSockets?: number;
    log?: Pick<ServerProcess, 'nextLine'>;
  } = {},
): ChatClient {
  const socketPath = base.startsWith('http') ? undefined : base;
  const origin = socketPath ? 'http://localhost' : base;
  const maxSockets = options.pinned ? 1 : (options.maxSockets ?? 64);
  const agent = new Agent({ keepAlive: true, maxSockets });

  function call(
    method: string,
    path: string,
    payload?: unknown,
    signal?: AbortSignal,
    headers: Record<string, string> = {},
  ) {
    return new Promise<HttpAnswer>((resolve, reject) => {
      const body = payload === undefined ? undefined : JSON.stringify(payload);
      const req = request(
        new URL(path, origin),
        {
          method,
          agent,
          socketPath,
          signal,
          headers: body ? { 'content-type': 'application/json', ...headers } : headers,
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
          });
          res.on('end', () => {
            try {
              const json = /json/.test(res.headers['content-type'] ?? '');
              resolve({
                status: res.statusCode ?? 0,
                body: json && text ? JSON.parse(text) : undefined,
                text,
              });
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
    async text(path) {
      const answer = await call('GET', path);
      if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status}`);
      return answer.text;
    },
    // The worker that answers logs the request with its pid; /health does not say it.
    async pid() {
      if (!options.log) throw new Error('pid() needs the server: chatClient(url, { log: server })');
      const id = `pid-probe-${randomUUID()}`;
      const logged = options.log.nextLine(new RegExp(`^.*"reqId":"${id}".*$`));
      await ok(call('GET', '/time', undefined, undefined, { 'x-request-id': id }), 'GET /time');
      return (JSON.parse((await logged)[0]) as { pid: number }).pid;
    },
    close: () => agent.destroy(),
  };
}

/** A gauge of `/metrics` (the sum or minimum over a cluster's workers), or undefined when absent. */
export async function gauge(client: ChatClient, name: string): Promise<number | undefined> {
  const text = await client.text('/metrics');
  const value = new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1];
  return value === undefined ? undefined : Number(value);
}

/**
 * Asks `/metrics` until the gauge `name` passes `check`: a state the server
 * reached, not just a request sent (test/helpers/wait.ts, every 10 ms).
 */
export async function untilGauge(
  client: ChatClient,
  name: string,
  check: (value: number) => boolean,
  timeoutMs = 10_000,
): Promise<void> {
  const passes = async () => check((await gauge(client, name)) ?? Number.NaN);
  await until(passes, `${name} to pass its check`, timeoutMs, 10);
}

/**
 * Until `chat_polls_waiting` reaches `count`: the polls are registered, not
 * just sent. In a cluster it is the sum over the workers.
 */
export function untilWaiting(client: ChatClient, count: number, timeoutMs = 10_000): Promise<void> {
  return untilGauge(client, 'chat_polls_waiting', (waiting) => waiting >= count, timeoutMs);
}

/**
 * In cluster mode each connection goes to one worker: pinned clients from
 * `open` until one reaches the worker wanted (pid `pid`, or any but `not`),
 * with that worker's pid. The others are closed.
 */
export async function pinnedToWorker(
  open: () => ChatClient,
  want: { pid?: number; not?: number },
): Promise<[ChatClient, number]> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const client = open();
    const pid = await client.pid();
    if ((want.pid === undefined || pid === want.pid) && pid !== want.not) return [client, pid];
    client.close();
  }
  throw new Error(`no connection reached the worker wanted (${JSON.stringify(want)})`);
}
