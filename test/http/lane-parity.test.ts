/**
 * The lane and the Express app keep one contract (server/http/lane.ts): for
 * every lane route, method and spelling, the lane's answer is compared with
 * the app's answer to the same kind of request (a JSON read, an error), and
 * may differ only as `LANE_DIFFERENCES` says: the header set, the log line's
 * fields, the error's shape, HEAD, and the refusal counter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LANE_DIFFERENCES, LANE_ROUTES } from '../../server/http/lane.ts';
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
/** Fields every line has from the logger itself. */
const LOGGER = new Set(['level', 'time', 'pid', 'hostname', 'msg']);

let chat: TestChat;
const captured = captureLog();

beforeAll(async () => {
  chat = await startTestChat({ pollTimeoutMs: 60_000, metrics: true }, { log: captured.log });
  await chat.send({ text: 'hello' }); // so `since=0` is answered at once
});
afterAll(async () => {
  await chat?.close();
});

interface Seen {
  status: number;
  headers: string[];
  body: string;
  line: LogLine;
}

/** Sends one request and returns its answer and its log line. */
async function ask(method: string, path: string, init: RequestInit = {}): Promise<Seen> {
  const id = `parity-${Math.random().toString(36).slice(2)}`;
  const res = await fetch(chat.url + path, {
    ...init,
    method,
    headers: { 'x-request-id': id, ...(init.headers as Record<string, string>) },
  });
  const body = await res.text();
  await until(
    () => captured.lines.some((line) => line.reqId === id),
    `the line of ${method} ${path}`,
  );
  return {
    status: res.status,
    headers: [...res.headers.keys()].filter((name) => !FRAMING.has(name)).sort(),
    body,
    line: captured.lines.find((line) => line.reqId === id)!,
  };
}

const fieldsOf = (line: LogLine) =>
  Object.keys(line)
    .filter((key) => !LOGGER.has(key))
    .sort();
const without = (names: readonly string[], gone: readonly string[]) =>
  names.filter((name) => !gone.includes(name));

/** What the lane's answers may lack of the app's, by route. */
function missingHeaders(path: string): readonly string[] {
  const recv = path === '/recv' ? LANE_DIFFERENCES.recv.missingHeaders : [];
  return [...LANE_DIFFERENCES.documentHeaders, ...recv];
}

/** A request each lane route answers with 200, and one it refuses with 400. */
const REQUESTS = {
  '/recv': { ok: { query: '?since=0', init: {} }, bad: { query: '?since=x', init: {} } },
  '/time': { ok: { query: '', init: {} }, bad: undefined },
  '/send': {
    ok: {
      query: '',
      init: {
        body: JSON.stringify({ text: 'hi' }),
        headers: { 'content-type': 'application/json' },
      },
    },
    bad: {
      query: '',
      init: { body: JSON.stringify({ text: '' }), headers: { 'content-type': 'application/json' } },
    },
  },
} as const;

let app: { json: Seen; error: Seen; head: Seen };

beforeAll(async () => {
  app = {
    json: await ask('GET', '/health'),
    // A refusal of no route's own: /history's carry its limit's RateLimit headers.
    error: await ask('GET', '/no-such-route'),
    head: await ask('HEAD', '/health'),
  };
});

describe('the app, as the lane is compared with it', () => {
  it('answers JSON with document headers, a request id and an ip in its line', () => {
    expect(app.json.headers).toEqual(
      expect.arrayContaining(['x-request-id', 'content-security-policy']),
    );
    expect(fieldsOf(app.json.line)).toContain('ip');
    expect(app.head.body).toBe('');
    expect(app.head.headers).toEqual(app.json.headers);
  });
});

for (const { path, methods } of LANE_ROUTES) {
  for (const method of methods) {
    for (const spelling of [path, path.toUpperCase(), `${path}/`]) {
      describe(`${method} ${spelling}`, () => {
        const { ok, bad } = REQUESTS[path];

        it('answers with the app’s JSON headers, but for the documented differences', async () => {
          const seen = await ask(method, spelling + ok.query, ok.init);
          expect(seen.status).toBe(200);
          expect(seen.headers).toEqual(without(app.json.headers, missingHeaders(path)));
          if (method === 'HEAD') expect(seen.body).toBe('');
          else expect(JSON.parse(seen.body)).toBeTypeOf('object');
        });

        it('logs one line with the app’s fields, but for the documented differences', async () => {
          const seen = await ask(method, spelling + ok.query, ok.init);
          expect(seen.line.path).toBe(path);
          const appFields = without(fieldsOf(app.json.line), ['code']);
          const fields = without(fieldsOf(seen.line), ['room', 'outcome']);
          const missing = path === '/recv' ? LANE_DIFFERENCES.recv.missingLogFields : [];
          expect(fields).toEqual(without(appFields, missing));
        });

        if (method === 'HEAD') {
          it('answers HEAD as GET, without the body', async () => {
            const head = await ask('HEAD', spelling + ok.query, ok.init);
            const get = await ask('GET', spelling + ok.query, ok.init);
            expect(head.status).toBe(get.status);
            expect(head.headers).toEqual(get.headers);
            expect(head.body).toBe('');
          });
        }

        if (bad !== undefined && method !== 'HEAD') {
          it('refuses as the app does: the error shape, its headers, its count', async () => {
            const before = seriesValue(await scrape(), refusedSeries(path));
            const seen = await ask(method, spelling + bad.query, bad.init);
            expect(seen.status).toBe(400);
            expect(Object.keys(JSON.parse(seen.body))).toEqual(['error']);
            expect(Object.keys(JSON.parse(seen.body).error).sort()).toEqual(['code', 'message']);
            expect(seen.headers).toEqual(without(app.error.headers, missingHeaders(path)));
            expect(seen.line.code).toBe(JSON.parse(seen.body).error.code);
            expect(seriesValue(await scrape(), refusedSeries(path))).toBe(before + 1);
          });
        }
      });
    }
  }
}

describe('a method the lane does not answer', () => {
  it('gets the app’s 405 with Allow, counted as a refusal like any other', async () => {
    const series = 'chat_requests_refused_total{code="method_not_allowed"}';
    const before = seriesValue(await scrape(), series);
    const seen = await ask('POST', '/recv');
    expect(seen.status).toBe(405);
    expect(seriesValue(await scrape(), series)).toBe(before + 1);
  });
});

const refusedSeries = (path: string) =>
  `chat_requests_refused_total{code="${path === '/recv' ? 'invalid_cursor' : 'text_required'}"}`;

/** The value of one series in Prometheus text, 0 when absent. */
function seriesValue(text: string, series: string): number {
  const escaped = series.replace(/[{}"\\]/g, (c) => `\\${c}`);
  return Number(new RegExp(`^${escaped} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
}

async function scrape(): Promise<string> {
  return (await fetch(`${chat.url}/metrics`)).text();
}
