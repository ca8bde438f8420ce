/**
 * One chain (server/http/hot-routes.ts): a hot route is answered by the same
 * handler whether the lane hands it over (the running chat's listener) or
 * the Express app routes it (the app alone, as a user mounting it would
 * serve it). For every hot route, method and spelling, both ways give the
 * same status, headers, body limit, log line and error body.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/http/app.ts';
import { JSON_HEADERS } from '../../server/http/headers.ts';
import { LANE_ROUTES } from '../../server/http/hot-path.ts';
import { startTestChat, type TestChat, until } from '../helpers/chat.ts';
import { captureLog, type LogLine } from '../ops/log-capture.ts';

/** Headers of the connection and the body's framing, not of the answer. */
const FRAMING = new Set([
  'connection',
  'keep-alive',
  'date',
  'content-length',
  'transfer-encoding',
]);
/** Fields that differ from one request to the next. */
const VARYING = new Set(['time', 'reqId', 'ms', 'pid', 'hostname']);

const captured = captureLog();
let chat: TestChat;
let appServer: Server;
let ways: { lane: string; app: string };

beforeAll(async () => {
  chat = await startTestChat({ pollTimeoutMs: 60_000, metrics: true }, { log: captured.log });
  await chat.send({ text: 'hello' }); // so `since=0` is answered at once
  appServer = createServer(createApp(chat, { ops: chat.ops }));
  appServer.listen(0, '127.0.0.1');
  await once(appServer, 'listening');
  ways = {
    lane: chat.url,
    app: `http://127.0.0.1:${(appServer.address() as AddressInfo).port}`,
  };
});
afterAll(async () => {
  appServer?.closeAllConnections();
  await new Promise((resolve) => appServer?.close(resolve));
  await chat?.close();
});

interface Seen {
  status: number;
  headers: Record<string, string>;
  body: string;
  line: Record<string, unknown>;
}

/** One request by one way in: its answer and its log line, fields that vary left out. */
async function ask(
  way: keyof typeof ways,
  method: string,
  path: string,
  init: RequestInit = {},
): Promise<Seen> {
  const id = `chain-${Math.random().toString(36).slice(2)}`;
  const res = await fetch(ways[way] + path, {
    ...init,
    method,
    headers: { 'x-request-id': id, ...(init.headers as Record<string, string>) },
  });
  const body = await res.text();
  await until(() => captured.lines.some((line) => line.reqId === id), `${method} ${path}`);
  const line = captured.lines.find((seen: LogLine) => seen.reqId === id)!;
  const headers: Record<string, string> = {};
  for (const [name, value] of res.headers) {
    if (!FRAMING.has(name)) headers[name] = name === 'x-request-id' ? '(id)' : value;
  }
  return {
    status: res.status,
    headers,
    body,
    line: Object.fromEntries(Object.entries(line).filter(([key]) => !VARYING.has(key))),
  };
}

/** The answer's shape: its keys, and the whole body of an error. */
const shape = (body: string) => {
  if (body === '') return '';
  const json = JSON.parse(body) as Record<string, unknown>;
  return 'error' in json ? json : Object.keys(json).sort();
};

const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  body: typeof body === 'string' ? body : JSON.stringify(body),
  headers: { 'content-type': 'application/json', ...headers },
});

/** Requests each hot route answers: one it takes, and ones it refuses. */
const REQUESTS: Record<string, { name: string; query: string; init?: RequestInit }[]> = {
  '/recv': [
    { name: 'a poll with news', query: '?since=0' },
    { name: 'a bad cursor', query: '?since=x' },
    { name: 'a bad room', query: '?since=0&room=%00' },
  ],
  '/send': [
    { name: 'a message', query: '', init: json({ text: 'hi' }) },
    { name: 'an empty text', query: '', init: json({ text: '' }) },
    { name: 'a body past the limit', query: '', init: json('x'.repeat(70_000)) },
    { name: 'a body of no JSON', query: '', init: json('{') },
    { name: 'another media type', query: '', init: { body: 'hi' } },
  ],
  '/time': [{ name: 'the time', query: '' }],
};

for (const { path, methods } of LANE_ROUTES) {
  for (const method of methods) {
    for (const spelling of [path, path.toUpperCase(), `${path}/`]) {
      describe(`${method} ${spelling}`, () => {
        for (const { name, query, init } of REQUESTS[path]!) {
          it(`answers ${name} alike through the lane and through the app`, async () => {
            const lane = await ask('lane', method, spelling + query, init);
            const app = await ask('app', method, spelling + query, init);
            expect(app.status).toBe(lane.status);
            expect(app.headers).toEqual(lane.headers);
            expect(shape(app.body)).toEqual(shape(lane.body));
            expect(app.line).toEqual(lane.line);
            // The policy's JSON headers, and none of helmet's document headers.
            for (const [header, value] of Object.entries(JSON_HEADERS)) {
              expect(lane.headers[header.toLowerCase()], header).toBe(value);
            }
            expect(lane.headers['content-security-policy']).toBeUndefined();
            if (lane.status >= 400 && method !== 'HEAD') {
              const { error } = JSON.parse(lane.body) as { error: { code: string } };
              expect(lane.line.code).toBe(error.code);
            }
          });
        }
      });
    }
  }
}

describe('HEAD on a hot route', () => {
  for (const path of ['/recv', '/time']) {
    for (const way of ['lane', 'app'] as const) {
      it(`answers ${path} as GET without the body, through the ${way}`, async () => {
        const query = path === '/recv' ? '?since=0' : '';
        const head = await ask(way, 'HEAD', path + query);
        const get = await ask(way, 'GET', path + query);
        expect(head.status).toBe(get.status);
        expect(head.headers).toEqual(get.headers);
        expect(head.body).toBe('');
        expect(get.body).not.toBe('');
      });
    }
  }
});

describe('a method no hot route takes', () => {
  it('gets the app’s 405 with Allow, either way', async () => {
    const lane = await ask('lane', 'POST', '/recv');
    const app = await ask('app', 'POST', '/recv');
    expect(lane.status).toBe(405);
    expect(app.status).toBe(405);
    expect(app.headers).toEqual(lane.headers);
    expect(app.body).toBe(lane.body);
  });
});

describe('the routes that are not hot', () => {
  it('log the same fields as a hot route, by the same writer', async () => {
    const time = await ask('lane', 'GET', '/time');
    const health = await ask('lane', 'GET', '/health');
    expect(Object.keys(health.line).sort()).toEqual(Object.keys(time.line).sort());
    expect(health.line).toMatchObject({
      level: 'info',
      method: 'GET',
      path: '/health',
      status: 200,
    });
    expect(health.line.msg).toBe('GET /health 200');
  });

  it('count and log a refusal once, with its code, as a hot route does', async () => {
    const series = 'chat_requests_refused_total{code="not_found"}';
    const before = seriesValue(await scrape(), series);
    const missing = await ask('lane', 'GET', '/no-such-route');
    expect(missing.status).toBe(404);
    expect(missing.line).toMatchObject({ code: 'not_found', msg: 'GET /no-such-route 404' });
    expect(seriesValue(await scrape(), series)).toBe(before + 1);
  });
});

/** The value of one series in Prometheus text, 0 when absent. */
function seriesValue(text: string, series: string): number {
  const escaped = series.replace(/[{}"\\]/g, (c) => `\\${c}`);
  return Number(new RegExp(`^${escaped} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
}

async function scrape(): Promise<string> {
  return (await fetch(`${chat.url}/metrics`)).text();
}
