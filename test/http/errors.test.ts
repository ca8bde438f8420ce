/**
 * Every code of the error table (`server/core/errors.ts`), caused by the input
 * that should cause it. Tests assert the code and the status, not the wording.
 */
import { once } from 'node:events';
import { connect } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { errorCodes } from '../../server/core/errors.ts';
import { MemoryStore } from '../../server/store/memory-store.ts';
import { StoreUnavailableError } from '../../server/store/store.ts';
import { startTestChat, type TestChat, until } from '../helpers/chat.ts';
import { captureLog } from '../ops/log-capture.ts';

let chat: TestChat;
afterEach(async () => {
  await chat?.close();
});

async function expectError(res: Response, status: number, code: string): Promise<void> {
  expect({
    status: res.status,
    code: ((await res.json()) as { error: { code: string } }).error.code,
  }).toEqual({
    status,
    code,
  });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
}

const postRaw = (chat: TestChat, body: string, headers: Record<string, string>) =>
  chat.get('/send', { method: 'POST', headers, body });

describe('errors', () => {
  describe('POST /send with invalid fields (400)', () => {
    const cases: [string, unknown, string][] = [
      ['no text', { nickname: 'Ada' }, 'text_required'],
      ['blank text', { text: ' \n\t ' }, 'text_required'],
      ['text of 2001 characters', { text: 'x'.repeat(2001) }, 'text_too_long'],
      ['text that is a number', { text: 42 }, 'invalid_text'],
      ['nickname that is a list', { text: 'hi', nickname: ['a'] }, 'invalid_nickname'],
      ['nickname of 33 characters', { text: 'hi', nickname: 'n'.repeat(33) }, 'nickname_too_long'],
      ['room with capitals', { text: 'hi', room: 'Main' }, 'invalid_room'],
      ['room of 33 characters', { text: 'hi', room: 'r'.repeat(33) }, 'invalid_room'],
      ['key with a space', { text: 'hi', key: 'a b' }, 'invalid_key'],
      ['key of 65 characters', { text: 'hi', key: 'k'.repeat(65) }, 'invalid_key'],
      ['client id of 7 characters', { text: 'hi', client: 'abcdefg' }, 'invalid_client'],
      ['client id that is a number', { text: 'hi', client: 12345678 }, 'invalid_client'],
      [
        'client id that is null (a form cannot send one; absent is none)',
        { text: 'hi', client: null },
        'invalid_client',
      ],
      ['a JSON list', [1, 2], 'invalid_body'],
      // C1 controls (U+0080-U+009F) are invisible: such a message would show nothing.
      ['text of C1 control characters only', { text: '\u000b\u009e\u0085 ' }, 'text_required'],
      [
        'a JSON object of 101 fields',
        { text: 'hi', ...Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}`, 1])) },
        'too_many_fields',
      ],
    ];
    for (const [what, body, code] of cases) {
      it(`answers ${code} for ${what}`, async () => {
        chat = await startTestChat();
        await expectError(await chat.post('/send', body), 400, code);
        expect(await chat.store.after('main', 0, 10)).toEqual([]);
      });
    }

    it('answers too_many_fields for a form of 101 fields, and ignores fewer unknown ones', async () => {
      chat = await startTestChat();
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const fields = (count: number) =>
        Array.from({ length: count }, (_, i) => `f${i}=1`).join('&');
      await expectError(
        await postRaw(chat, `text=hi&${fields(100)}`, form),
        400,
        'too_many_fields',
      );
      expect((await postRaw(chat, `text=hi&${fields(99)}`, form)).status).toBe(200);
    });

    it('answers invalid_json for a body that is not JSON', async () => {
      chat = await startTestChat();
      await expectError(
        await postRaw(chat, '{"text": "hi"', { 'content-type': 'application/json' }),
        400,
        'invalid_json',
      );
    });
  });

  describe('GET routes with invalid parameters (400)', () => {
    const cases: [string, string][] = [
      ['/recv?since=-1', 'invalid_cursor'],
      ['/recv?since=1.5', 'invalid_cursor'],
      ['/recv?since=abc', 'invalid_cursor'],
      ['/recv?since=0&room=no%20spaces', 'invalid_room'],
      ['/recv?since=0&client=short', 'invalid_client'],
      ['/history?before=x', 'invalid_cursor'],
      ['/history?limit=0', 'invalid_limit'],
      ['/history?limit=101', 'invalid_limit'],
      ['/history?limit=ten', 'invalid_limit'],
      ['/history?room=_bad', 'invalid_room'],
    ];
    for (const [path, code] of cases) {
      it(`answers ${code} for ${path}`, async () => {
        chat = await startTestChat();
        await expectError(await chat.get(path), 400, code);
      });
    }
  });

  describe('a send from another site (403)', () => {
    it('is refused when the browser says cross-site', async () => {
      chat = await startTestChat();
      const res = await postRaw(chat, 'text=pwned', {
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'cross-site',
        origin: 'https://evil.example',
      });
      await expectError(res, 403, 'cross_site');
      expect(await chat.store.after('main', 0, 10)).toEqual([]);
    });

    it('is refused by Origin when the browser sends no Sec-Fetch-Site', async () => {
      chat = await startTestChat();
      const res = await postRaw(chat, 'text=pwned', {
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'https://evil.example',
      });
      await expectError(res, 403, 'cross_site');
    });

    it('passes for the same origin, for an allowed origin, and for a client without either header', async () => {
      chat = await startTestChat({ allowedOrigins: ['https://partner.example'] });
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const sameSite = await postRaw(chat, 'text=a', {
        ...form,
        'sec-fetch-site': 'same-origin',
        origin: chat.url,
      });
      const sameOrigin = await postRaw(chat, 'text=b', { ...form, origin: chat.url });
      const partner = await postRaw(chat, 'text=c', {
        ...form,
        origin: 'https://partner.example',
        'sec-fetch-site': 'cross-site',
      });
      const curl = await postRaw(chat, 'text=d', form);
      expect([sameSite.status, sameOrigin.status, partner.status, curl.status]).toEqual([
        200, 200, 200, 200,
      ]);
    });
  });

  describe('a send through a proxy that names the host (X-Forwarded-Host)', () => {
    const headers = {
      'content-type': 'application/x-www-form-urlencoded',
      origin: 'https://chat.example',
      'x-forwarded-host': 'chat.example',
    };

    it('is compared with that host when TRUST_PROXY trusts the proxy', async () => {
      // On loopback a proxy's host must be listed (ALLOWED_HOSTS), as the deploy guides say.
      chat = await startTestChat({ trustProxy: 'loopback', allowedHosts: ['chat.example'] });
      expect((await postRaw(chat, 'text=via+proxy', headers)).status).toBe(200);
    });

    it('is compared with Host when it does not: anyone can send X-Forwarded-Host', async () => {
      chat = await startTestChat({ trustProxy: false });
      await expectError(await postRaw(chat, 'text=forged', headers), 403, 'cross_site');
      expect(await chat.store.after('main', 0, 10)).toEqual([]);
    });
  });

  it('answers not_found (404) for an unknown route', async () => {
    chat = await startTestChat();
    await expectError(await chat.get('/nope'), 404, 'not_found');
  });

  it('answers method_not_allowed (405) with Allow for GET /send', async () => {
    chat = await startTestChat();
    const res = await chat.get('/send');
    expect(res.headers.get('allow')).toBe('POST');
    await expectError(res, 405, 'method_not_allowed');
  });

  it('answers body_too_large (413) past 16 KB', async () => {
    chat = await startTestChat();
    const res = await chat.post('/send', { text: 'hi', padding: 'x'.repeat(17 * 1024) });
    await expectError(res, 413, 'body_too_large');
  });

  it('answers unsupported_media_type (415) for other content types', async () => {
    chat = await startTestChat();
    await expectError(
      await postRaw(chat, 'text=hi', { 'content-type': 'text/plain' }),
      415,
      'unsupported_media_type',
    );
    await expectError(
      await postRaw(chat, '<text>hi</text>', { 'content-type': 'application/xml' }),
      415,
      'unsupported_media_type',
    );
  });

  describe('a send with a Content-Encoding', () => {
    const json = Buffer.from(JSON.stringify({ text: 'compressed' }));
    const send = (chat: TestChat, encoding: string, body: Buffer) =>
      chat.get('/send', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        body: new Uint8Array(body),
      });

    it('is decoded when the body is what it says', async () => {
      chat = await startTestChat();
      for (const [encoding, body] of [
        ['gzip', gzipSync(json)],
        ['deflate', deflateSync(json)],
        ['br', brotliCompressSync(json)],
      ] as const) {
        expect((await send(chat, encoding, body)).status, encoding).toBe(200);
      }
    });

    const corrupt: [string, Buffer][] = [
      ['gzip that is not gzip', Buffer.from('plain text, not gzip')],
      ['gzip cut short', gzipSync(json).subarray(0, 12)],
      ['deflate that is not deflate', Buffer.from('garbage!!')],
      ['br that is not brotli', Buffer.from('garbage!!!!')],
    ];
    for (const [what, body] of corrupt) {
      it(`answers invalid_encoding (400) for ${what}, and logs no error`, async () => {
        const captured = captureLog();
        chat = await startTestChat({}, { log: captured.log });
        const encoding = what.split(' ')[0]!;
        await expectError(await send(chat, encoding, body), 400, 'invalid_encoding');
        await captured.next((line) => line.path === '/send', 'the request line');
        expect(captured.lines.filter((line) => line.level === 'error')).toEqual([]);
      });
    }

    it('answers unsupported_encoding (415) for an encoding it does not know', async () => {
      chat = await startTestChat();
      await expectError(await send(chat, 'x-lzma', json), 415, 'unsupported_encoding');
      await expectError(await send(chat, 'gzip, br', json), 415, 'unsupported_encoding');
    });
  });

  describe('a client that hangs up mid-upload', () => {
    it('is logged as an aborted request, not as an error', async () => {
      const captured = captureLog();
      chat = await startTestChat({}, { log: captured.log });
      const { port } = new URL(chat.url);
      const socket = connect(Number(port), '127.0.0.1');
      await once(socket, 'connect');
      const arrived = once(chat.server, 'request');
      socket.write(
        'POST /send HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"text": "half',
      );
      // The server is reading the body: hang up.
      await arrived;
      socket.destroy();
      const line = await captured.next((l) => l.path === '/send', 'the request line');
      expect(line).toMatchObject({ level: 'info', status: 0, msg: 'POST /send aborted' });
      expect(captured.lines.filter((l) => l.level === 'error' || l.status === 500)).toEqual([]);
      expect(await chat.store.after('main', 0, 10)).toEqual([]);
    });
  });

  it('answers rate_limited (429) with Retry-After past the burst, per address', async () => {
    chat = await startTestChat({ sendRatePerSec: 1, sendBurst: 2 });
    expect((await chat.post('/send', { text: '1' })).status).toBe(200);
    expect((await chat.post('/send', { text: '2' })).status).toBe(200);
    const res = await chat.post('/send', { text: '3' });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await expectError(res, 429, 'rate_limited');
    expect(await chat.store.after('main', 0, 10)).toHaveLength(2);
  });

  it('answers overloaded (503) with Retry-After when the process holds its maximum of polls', async () => {
    chat = await startTestChat({ maxWaiters: 1, pollTimeoutMs: 60_000 });
    const abort = new AbortController();
    const held = chat.get('/recv?since=0', { signal: abort.signal }).catch(() => undefined);
    await until(() => chat.hub.waiting === 1, 'the poll to wait');
    const res = await chat.get('/recv?since=0');
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    await expectError(res, 503, 'overloaded');
    abort.abort();
    await held;
  });

  it('answers shutting_down (503) once the server is closing', async () => {
    chat = await startTestChat();
    chat.hub.shutdown();
    await expectError(await chat.post('/send', { text: 'late' }), 503, 'shutting_down');
  });

  describe('when the store fails', () => {
    class BrokenStore extends MemoryStore {
      constructor(private readonly error: Error) {
        super();
      }
      override async before(): Promise<never> {
        throw this.error;
      }
    }

    it('answers store_unavailable (503) with Retry-After when it cannot be reached', async () => {
      chat = await startTestChat({}, { store: new BrokenStore(new StoreUnavailableError('down')) });
      const res = await chat.get('/history');
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      await expectError(res, 503, 'store_unavailable');
    });

    it('answers internal_error (500) for a bug, without leaking its message', async () => {
      chat = await startTestChat({}, { store: new BrokenStore(new Error('secret detail')) });
      const res = await chat.get('/history');
      const text = await res.clone().text();
      expect(text).not.toContain('secret detail');
      await expectError(res, 500, 'internal_error');
    });
  });

  it('has a status and a message for every code of the table', () => {
    for (const [code, { status, message }] of Object.entries(errorCodes)) {
      expect(status, code).toBeGreaterThanOrEqual(400);
      expect(message.length, code).toBeGreaterThan(10);
    }
  });
});
