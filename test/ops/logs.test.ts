/**
 * The log (server/core/log.ts) and the request log (server/metrics/request-log.ts):
 * JSON lines an operator's collector can parse, one per finished request.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../server/store/memory-store.ts';
import { startTestChat, type TestChat } from '../helpers/chat.ts';
import { captureLog, type LogLine } from './log-capture.ts';

let chat: TestChat | undefined;
afterEach(async () => {
  await chat?.close();
  chat = undefined;
});

const requestLine = (method: string, path: string) => (line: LogLine) =>
  line.method === method && line.path === path;

describe('the request log', () => {
  describe('when a request is answered', () => {
    it('writes one JSON line with the method, path, status, duration and request id', async () => {
      const captured = captureLog();
      chat = await startTestChat({}, { log: captured.log });
      const res = await chat.get('/history?room=dev&limit=5');
      expect(res.status).toBe(200);
      const line = await captured.next(requestLine('GET', '/history'), 'the request line');
      expect(line).toMatchObject({
        level: 'info',
        method: 'GET',
        path: '/history',
        status: 200,
        reqId: res.headers.get('x-request-id'),
        msg: 'GET /history 200',
      });
      expect(typeof line.ms).toBe('number');
      expect(line.reqId).toMatch(/^[0-9a-f-]{36}$/);
      expect(captured.lines.filter(requestLine('GET', '/history'))).toHaveLength(1);
    });

    it('honours an incoming X-Request-Id and echoes it', async () => {
      const captured = captureLog();
      chat = await startTestChat({}, { log: captured.log });
      const res = await chat.get('/time', { headers: { 'x-request-id': 'edge-42.abc' } });
      expect(res.headers.get('x-request-id')).toBe('edge-42.abc');
      const line = await captured.next(requestLine('GET', '/time'), 'the request line');
      expect(line.reqId).toBe('edge-42.abc');
    });

    it('makes its own id when the incoming one is not a sane token', async () => {
      const captured = captureLog();
      chat = await startTestChat({}, { log: captured.log });
      const res = await chat.get('/time', { headers: { 'x-request-id': 'a b "c"' } });
      const id = res.headers.get('x-request-id');
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect((await captured.next(requestLine('GET', '/time'), 'the line')).reqId).toBe(id);
    });
  });

  describe('when a request is refused', () => {
    it('logs a 4xx at info with its error code', async () => {
      const captured = captureLog();
      chat = await startTestChat({}, { log: captured.log });
      await chat.get('/history?limit=0');
      const line = await captured.next(requestLine('GET', '/history'), 'the request line');
      expect(line).toMatchObject({ level: 'info', status: 400, code: 'invalid_limit' });
      expect(line.err).toBeUndefined();
    });

    it('logs a bug (500) at error, once, with its stack', async () => {
      class BuggyStore extends MemoryStore {
        override async before(): Promise<never> {
          throw new Error('a bug in the store');
        }
      }
      const captured = captureLog();
      chat = await startTestChat({}, { store: new BuggyStore(), log: captured.log });
      expect((await chat.get('/history')).status).toBe(500);
      const line = await captured.next(requestLine('GET', '/history'), 'the request line');
      expect(line).toMatchObject({ level: 'error', status: 500, code: 'internal_error' });
      expect((line.err as { stack: string }).stack).toContain('a bug in the store');
      expect(captured.lines.filter((l) => l.level === 'error')).toHaveLength(1);
    });
  });

  describe('for POST /send (answered outside Express)', () => {
    it("writes the same fields, the address and a refusal's code included", async () => {
      const captured = captureLog();
      chat = await startTestChat({}, { log: captured.log });
      const ok = await chat.post('/send', { text: 'hi' });
      const refused = await chat.post('/send', { text: '' });
      const [first, second] = [
        await captured.next((l) => requestLine('POST', '/send')(l) && l.status === 200, 'the 200'),
        await captured.next((l) => requestLine('POST', '/send')(l) && l.status === 400, 'the 400'),
      ];
      expect(first).toMatchObject({
        level: 'info',
        reqId: ok.headers.get('x-request-id'),
        ip: '127.0.0.1',
        msg: 'POST /send 200',
      });
      expect(typeof first!.ms).toBe('number');
      expect(second).toMatchObject({
        level: 'info',
        reqId: refused.headers.get('x-request-id'),
        code: 'text_required',
        msg: 'POST /send 400',
      });
      const metrics = await (await chat.get('/metrics')).text();
      expect(metrics).toMatch(/^chat_requests_refused_total\{code="text_required"\} 1$/m);
    });

    it('logs a bug (500) at error, once, with its stack', async () => {
      class BuggyStore extends MemoryStore {
        override async append(): Promise<never> {
          throw new Error('a bug in append');
        }
      }
      const captured = captureLog();
      chat = await startTestChat({}, { store: new BuggyStore(), log: captured.log });
      const res = await chat.post('/send', { text: 'hi' });
      expect(res.status).toBe(500);
      expect((await res.json()).error.code).toBe('internal_error');
      const line = await captured.next(requestLine('POST', '/send'), 'the request line');
      expect(line).toMatchObject({ level: 'error', status: 500, code: 'internal_error' });
      expect((line.err as { stack: string }).stack).toContain('a bug in append');
      expect(captured.lines.filter((l) => l.level === 'error')).toHaveLength(1);
    });
  });

  describe('at LOG_LEVEL=warn', () => {
    it('writes no line for ordinary answers, still echoes the id, and still logs a bug with its stack', async () => {
      class BuggyStore extends MemoryStore {
        override async before(): Promise<never> {
          throw new Error('a bug in the store');
        }
      }
      const captured = captureLog('warn');
      chat = await startTestChat({}, { store: new BuggyStore(), log: captured.log });
      const ok = await chat.get('/history?limit=x', { headers: { 'X-Request-Id': 'edge-7' } });
      expect(ok.status).toBe(400);
      expect(ok.headers.get('x-request-id')).toBe('edge-7');
      expect((await chat.get('/history')).status).toBe(500);
      const line = await captured.next(requestLine('GET', '/history'), "the bug's line");
      expect(line).toMatchObject({ level: 'error', status: 500, code: 'internal_error' });
      expect((line.err as { stack: string }).stack).toContain('a bug in the store');
      expect(captured.lines).toHaveLength(1);
    });
  });

  describe('when a message is sent', () => {
    it('never writes its text or nickname at info', async () => {
      const captured = captureLog('info');
      chat = await startTestChat({}, { log: captured.log });
      await chat.send({ text: 'the-secret-text', nickname: 'the-secret-name' });
      await chat.post('/send', { text: 'also-secret', room: 'Bad Room' });
      await chat.get('/send', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"text": "broken-secret"',
      });
      await captured.next(
        (line) => line.path === '/send' && line.status === 400 && line.code === 'invalid_json',
        'the last send line',
      );
      expect(captured.lines.filter(requestLine('POST', '/send'))).toHaveLength(3);
      for (const secret of ['the-secret-text', 'the-secret-name', 'also-secret', 'broken-secret']) {
        expect(captured.text).not.toContain(secret);
      }
    });
  });
});

describe('the log', () => {
  it('keeps the call signature log(level, message, error?, fields?)', () => {
    const captured = captureLog('debug', 'worker 7: ');
    captured.log('error', 'publishing failed', new Error('boom'), { room: 'main' });
    captured.log('warn', 'store unavailable', new Error('ECONNREFUSED'));
    captured.log('info', 'chat listening on http://127.0.0.1:1');
    const [error, warn, info] = captured.lines;
    expect(error).toMatchObject({
      level: 'error',
      msg: 'worker 7: publishing failed',
      room: 'main',
    });
    expect((error!.err as { stack: string }).stack).toMatch(/^Error: boom\n/);
    // A warning keeps the error's message, not its stack.
    expect(warn).toMatchObject({ level: 'warn', error: 'ECONNREFUSED' });
    expect(warn!.err).toBeUndefined();
    expect(info).toMatchObject({
      level: 'info',
      msg: 'worker 7: chat listening on http://127.0.0.1:1',
    });
    for (const line of captured.lines) {
      expect(typeof line.pid).toBe('number');
      expect(new Date(line.time as string).toISOString()).toBe(line.time);
    }
  });

  it('writes nothing below its level (LOG_LEVEL)', () => {
    const captured = captureLog('warn');
    captured.log('info', 'not this');
    captured.log('debug', 'nor this');
    captured.log('warn', 'this');
    expect(captured.lines.map((line) => line.msg)).toEqual(['this']);
  });
});
