/**
 * `GET /metrics` (server/metrics/): Prometheus text with Node's process
 * metrics and the chat's, on the chat's port, on a port of its own, or off;
 * in a cluster, the sum of every worker's.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../server/http/api-routes.ts';
import { portOf } from '../../server/metrics/serve.ts';
import { startTestChat, type TestChat, until } from '../helpers/chat.ts';
import { freePort } from '../helpers/free-port.ts';
import {
  type ServerProcess,
  startServerProcess,
  stopAllServerProcesses,
} from '../helpers/processes.ts';
import { captureLog } from './log-capture.ts';

let chat: TestChat | undefined;
afterEach(async () => {
  await chat?.close();
  chat = undefined;
});

/** The value of one series in Prometheus text (`name` or `name{labels}`), NaN when absent. */
function seriesValue(text: string, series: string): number {
  const escaped = series.replace(/[{}"\\]/g, (c) => `\\${c}`);
  return Number(new RegExp(`^${escaped} (\\S+)$`, 'm').exec(text)?.[1]);
}

const scrape = async (url: string) => {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
};

describe('GET /metrics', () => {
  describe('on the chat port of one process', () => {
    it('answers the Prometheus text format with Node process metrics', async () => {
      chat = await startTestChat();
      const res = await chat.get('/metrics');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      const text = await res.text();
      for (const name of [
        'process_cpu_seconds_total',
        'process_resident_memory_bytes',
        'nodejs_eventloop_lag_seconds',
        'nodejs_heap_size_used_bytes',
      ]) {
        expect(text).toMatch(new RegExp(`^# TYPE ${name} `, 'm'));
      }
      expect(seriesValue(text, 'chat_info{store="memory",bus="local"}')).toBe(1);
    });

    it('counts messages sent (not repeats of a key), send latency, and refusals by code', async () => {
      chat = await startTestChat();
      await chat.send({ text: 'a', key: 'k1' });
      await chat.send({ text: 'a', key: 'k1' });
      await chat.send({ text: 'b' });
      await chat.post('/send', { text: 'c', room: 'Not A Room' });
      await chat.get('/history?limit=1000');
      const text = await scrape(chat.url);
      expect(seriesValue(text, 'chat_messages_sent_total')).toBe(2);
      expect(seriesValue(text, 'chat_send_duration_seconds_count')).toBe(3);
      expect(seriesValue(text, 'chat_requests_refused_total{code="invalid_room"}')).toBe(1);
      expect(seriesValue(text, 'chat_requests_refused_total{code="invalid_limit"}')).toBe(1);
      expect(seriesValue(text, 'chat_store_up')).toBe(1);
      expect(seriesValue(text, 'chat_bus_up')).toBe(1);
    });

    it('shows the waiting polls and the most the process holds', async () => {
      chat = await startTestChat({ pollTimeoutMs: 60_000, maxWaiters: 7 });
      const abort = new AbortController();
      const polls = [1, 2].map(() =>
        chat!.get('/recv?since=0', { signal: abort.signal }).catch(() => undefined),
      );
      await until(() => chat!.hub.waiting === 2, 'two polls to wait');
      const text = await scrape(chat.url);
      expect(seriesValue(text, 'chat_polls_waiting')).toBe(2);
      expect(seriesValue(text, 'chat_polls_max')).toBe(7);
      abort.abort();
      await Promise.all(polls);
    });

    it('is not one of the API routes the proxies pass on', () => {
      expect(API_ROUTES.map((route) => route.path)).not.toContain('/metrics');
    });
  });

  describe('with METRICS=off', () => {
    it('answers 404', async () => {
      chat = await startTestChat({ metrics: false });
      expect((await chat.get('/metrics')).status).toBe(404);
    });
  });

  describe('with METRICS_PORT', () => {
    it('answers on that port only', async () => {
      chat = await startTestChat({ metricsPort: 0 });
      const port = portOf(chat.ops.metricsServer!);
      expect(port).toBeGreaterThan(0);
      await chat.send({ text: 'one' });
      const text = await scrape(`http://127.0.0.1:${port}`);
      expect(seriesValue(text, 'chat_messages_sent_total')).toBe(1);
      expect((await chat.get('/metrics')).status).toBe(404);
      const other = await fetch(`http://127.0.0.1:${port}/send`);
      expect(other.status).toBe(404);
    });
  });
});

describe('the telemetry of the long-poll path', () => {
  it('logs one line per poll with how it ended, and observes its duration by outcome', async () => {
    const captured = captureLog();
    chat = await startTestChat({ pollTimeoutMs: 60_000 }, { log: captured.log });
    // A real request, as the long-poll path hands it over.
    const arrived = once(chat.server, 'request');
    const abort = new AbortController();
    const poll = chat
      .get('/recv?since=0', { signal: abort.signal, headers: { 'x-request-id': 'poll-1' } })
      .catch(() => undefined);
    const [req] = await arrived;
    chat.ops.telemetry.pollEnded({
      req,
      room: 'main',
      outcome: 'timeout',
      status: 200,
      ms: 25_004,
    });
    chat.ops.telemetry.pollEnded({
      req,
      room: 'main',
      outcome: 'error',
      status: 429,
      code: 'too_many_polls',
      ms: 1,
    });
    chat.ops.telemetry.delivered(3);
    abort.abort();
    await poll;

    expect(captured.lines.filter((line) => line.path === '/recv')).toMatchObject([
      {
        level: 'info',
        reqId: 'poll-1',
        method: 'GET',
        status: 200,
        ms: 25_004,
        room: 'main',
        outcome: 'timeout',
        msg: 'GET /recv 200 timeout',
      },
      { level: 'info', status: 429, outcome: 'error', code: 'too_many_polls' },
    ]);
    const text = await scrape(chat.url);
    expect(seriesValue(text, 'chat_poll_duration_seconds_count{outcome="timeout"}')).toBe(1);
    expect(seriesValue(text, 'chat_poll_duration_seconds_bucket{le="26",outcome="timeout"}')).toBe(
      1,
    );
    expect(seriesValue(text, 'chat_poll_duration_seconds_bucket{le="20",outcome="timeout"}')).toBe(
      0,
    );
    expect(seriesValue(text, 'chat_requests_refused_total{code="too_many_polls"}')).toBe(1);
    expect(seriesValue(text, 'chat_messages_delivered_total')).toBe(3);
  });
});

describe('in a cluster of 2 workers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'chat-metrics-'));
  const databaseUrl = `sqlite:${join(dir, 'chat.sqlite')}`;
  afterAll(async () => {
    await stopAllServerProcesses();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Sends `count` messages, each on a new connection (the cluster hands new
   * connections to the workers in turn), tagged with request ids; returns the
   * pids of the workers that logged them.
   */
  async function sendAcrossWorkers(server: ServerProcess, count: number): Promise<Set<number>> {
    const tag = randomUUID().slice(0, 8);
    for (let i = 0; i < count; i += 1) {
      const res = await fetch(`${server.url}/send`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-request-id': `${tag}-${i}`,
          connection: 'close',
        },
        body: JSON.stringify({ text: `message ${i}` }),
      });
      expect(res.status).toBe(200);
    }
    await until(() => server.output.split(`"reqId":"${tag}-`).length > count, 'the request lines');
    const lines = server.output.split('\n').filter((line) => line.includes(`"reqId":"${tag}-`));
    return new Set(lines.map((line) => (JSON.parse(line) as { pid: number }).pid));
  }

  describe('with /metrics on the chat port', () => {
    let server: ServerProcess;
    beforeAll(async () => {
      server = await startServerProcess({ workers: 2, env: { DATABASE_URL: databaseUrl } });
    }, 60_000);

    it('answers, from any worker, the sum of every worker', async () => {
      const pids = await sendAcrossWorkers(server, 10);
      expect(pids).toEqual(new Set(server.listeningPids));
      for (let scrapeNumber = 0; scrapeNumber < 2; scrapeNumber += 1) {
        // Each scrape on a new connection: two different workers answer.
        const res = await fetch(`${server.url}/metrics`, { headers: { connection: 'close' } });
        const text = await res.text();
        expect(seriesValue(text, 'chat_messages_sent_total')).toBe(10);
        expect(seriesValue(text, 'chat_send_duration_seconds_count')).toBe(10);
        expect(seriesValue(text, 'chat_info{store="sqlite",bus="cluster"}')).toBe(1);
        expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
      }
    });
  });

  describe('with METRICS_PORT', () => {
    let server: ServerProcess;
    let metricsPort: number;
    beforeAll(async () => {
      metricsPort = await freePort();
      server = await startServerProcess({
        workers: 2,
        env: { DATABASE_URL: databaseUrl, METRICS_PORT: String(metricsPort) },
      });
    }, 60_000);

    it('is served by the primary on that port, as the sum of every worker, and not on the chat port', async () => {
      const pids = await sendAcrossWorkers(server, 6);
      expect(pids.size).toBe(2);
      const text = await scrape(`http://127.0.0.1:${metricsPort}`);
      expect(seriesValue(text, 'chat_messages_sent_total')).toBe(6);
      expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    });
  });
});
