import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { MemoryStore } from '../../server/store/memory-store.ts';
import { StoreUnavailableError } from '../../server/store/store.ts';
import { startTestChat, type TestChat, until } from '../helpers/chat.ts';

let chat: TestChat;
afterEach(async () => {
  await chat?.close();
});

describe('GET /history', () => {
  it('answers the latest page, oldest first, and older pages with before', async () => {
    chat = await startTestChat();
    for (let i = 1; i <= 7; i += 1) await chat.send({ text: `m${i}` });
    const latest = (await (await chat.get('/history?limit=3')).json()) as {
      messages: { id: number }[];
    };
    expect(latest.messages.map((m) => m.id)).toEqual([5, 6, 7]);
    const older = (await (await chat.get('/history?limit=3&before=5')).json()) as {
      messages: { id: number }[];
    };
    expect(older.messages.map((m) => m.id)).toEqual([2, 3, 4]);
    const oldest = (await (await chat.get('/history?before=2')).json()) as {
      messages: { id: number }[];
    };
    expect(oldest.messages.map((m) => m.id)).toEqual([1]);
  });

  it('defaults to 50 messages of the main room', async () => {
    chat = await startTestChat();
    for (let i = 1; i <= 55; i += 1) await chat.send({ text: `m${i}` });
    await chat.send({ text: 'elsewhere', room: 'dev' });
    const body = (await (await chat.get('/history')).json()) as {
      messages: { id: number; room: string }[];
    };
    expect(body.messages).toHaveLength(50);
    expect(body.messages[0]).toMatchObject({ id: 6, room: 'main' });
  });
});

describe('GET /time', () => {
  it('answers the current time in ISO 8601', async () => {
    chat = await startTestChat();
    const before = Date.now();
    const { time } = (await (await chat.get('/time')).json()) as { time: string };
    expect(Date.parse(time)).toBeGreaterThanOrEqual(before - 1000);
    expect(new Date(time).toISOString()).toBe(time);
  });
});

describe('GET /health', () => {
  it('answers only {"status":"ok"}: no pid, backends or counts for the public', async () => {
    chat = await startTestChat({ pollTimeoutMs: 60_000 });
    const abort = new AbortController();
    const poll = chat.get('/recv?since=0', { signal: abort.signal }).catch(() => undefined);
    await until(() => chat.hub.waiting === 1, 'the poll to wait');
    const res = await chat.get('/health');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({ status: 'ok' });
    abort.abort();
    await poll;
  });

  it('answers only {"status":"unavailable"} with 503 and Retry-After when the store is down', async () => {
    class DownStore extends MemoryStore {
      override async ping(): Promise<never> {
        throw new StoreUnavailableError('MySQL cannot be used now: ECONNREFUSED');
      }
    }
    chat = await startTestChat({}, { store: new DownStore() });
    const res = await chat.get('/health');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await res.json()).toEqual({ status: 'unavailable' });
  });
});

describe('GET /ready', () => {
  it('answers as /health does: {"status":"ok"} while the chat serves', async () => {
    chat = await startTestChat();
    const res = await chat.get('/ready');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('answers 503 unavailable with Retry-After when the store is down', async () => {
    class DownStore extends MemoryStore {
      override async ping(): Promise<never> {
        throw new StoreUnavailableError('MySQL cannot be used now: ECONNREFUSED');
      }
    }
    chat = await startTestChat({}, { store: new DownStore() });
    const res = await chat.get('/ready');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await res.json()).toEqual({ status: 'unavailable' });
  });

  describe('once a graceful shutdown has begun (SHUTDOWN_DRAIN_MS)', () => {
    it('answers 503 draining, /health too, while sends and polls are still served', async () => {
      chat = await startTestChat({ shutdownDrainMs: 1_500 });
      const running = chat;
      const poll = running.recv('since=0');
      await until(() => running.hub.waiting === 1, 'the poll to wait');
      const closed = running.close();
      for (const path of ['/ready', '/health']) {
        const res = await running.get(path);
        expect({ path, status: res.status }).toEqual({ path, status: 503 });
        expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(await res.json()).toEqual({ status: 'draining' });
      }
      const sent = await running.send({ text: 'still served while draining' });
      expect((await poll).messages.map((m) => m.id)).toEqual([sent.id]);
      await closed;
    });
  });
});

describe('security headers', () => {
  it("answers /recv, /time and /send, refusals included, with the JSON headers and not helmet's", async () => {
    chat = await startTestChat();
    const answers = {
      '/send': await chat.post('/send', { text: 'hi' }),
      '/send (invalid)': await chat.post('/send', { text: '' }),
      '/time': await chat.get('/time'),
      '/recv': await chat.get('/recv?since=0'),
    };
    expect(answers['/send'].status).toBe(200);
    expect(answers['/send (invalid)'].status).toBe(400);
    for (const [name, { headers }] of Object.entries(answers)) {
      expect(headers.get('x-content-type-options'), name).toBe('nosniff');
      expect(headers.get('cross-origin-resource-policy'), name).toBe('same-origin');
      expect(headers.get('cache-control'), name).toBe('no-store');
      expect(headers.get('content-type'), name).toBe('application/json; charset=utf-8');
      // Document headers, which JSON answers go without (server/http/headers.ts).
      expect(headers.get('content-security-policy'), name).toBeNull();
      expect(headers.get('x-frame-options'), name).toBeNull();
    }
  });

  it('sets a CSP without inline scripts on the page, and not on the JSON answers of the app', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lpchat-public-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'index.html'), '<!doctype html><title>chat</title>');
    chat = await startTestChat({ serveStatic: true, staticDir: dir });
    const csp = (await chat.get('/')).headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline';script");
    expect(csp).not.toContain('upgrade-insecure-requests');
    // One policy per kind of answer (server/http/headers.ts): JSON gets the JSON headers.
    const history = await chat.get('/history');
    expect(history.headers.get('content-security-policy')).toBeNull();
    expect(history.headers.get('x-content-type-options')).toBe('nosniff');
    expect(history.headers.get('cross-origin-resource-policy')).toBe('same-origin');
  });
});

describe('static files', () => {
  it('serves index.html with no-cache and hashed assets for a year', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lpchat-public-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await mkdir(join(dir, 'assets'));
    await writeFile(join(dir, 'index.html'), '<!doctype html><title>chat</title>');
    await writeFile(join(dir, 'assets', 'index-AbC123.js'), 'console.log(1)');
    chat = await startTestChat({ serveStatic: true, staticDir: dir });
    const page = await chat.get('/');
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(await page.text()).toContain('<title>chat</title>');
    const asset = await chat.get('/assets/index-AbC123.js');
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const missing = await chat.get('/assets/nope.js');
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });
});

describe('graceful shutdown', () => {
  it('answers every waiting poll with an empty list, then stops', async () => {
    chat = await startTestChat({ pollTimeoutMs: 60_000 });
    await chat.send({ text: 'before' });
    const polls = [chat.recv('since=1'), chat.recv('since=0&room=dev'), chat.recv('')];
    await until(() => chat.hub.waiting === 3, 'three polls to wait');
    await chat.close();
    const answers = await Promise.all(polls);
    expect(answers.map((a) => a.messages)).toEqual([[], [], []]);
    expect(answers[0]!.cursor).toBe(1);
    await expect(chat.get('/time')).rejects.toThrow();
  });
});
