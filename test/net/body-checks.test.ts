import { afterEach, describe, expect, it } from 'vitest';
import { startTestChat, type TestChat } from '../helpers/chat.ts';
import { errorCode, exchange, parseAnswers, portOf } from '../helpers/raw-http.ts';

let chat: TestChat | undefined;
afterEach(async () => {
  await chat?.close();
  chat = undefined;
});

async function send(contentType: string, body: Uint8Array | string) {
  chat ??= await startTestChat();
  return chat.get('/send', {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: typeof body === 'string' ? body : new Blob([new Uint8Array(body)]),
  });
}

async function codeOf(res: Response): Promise<[number, string | undefined]> {
  const body = (await res.json()) as { error?: { code?: string } };
  return [res.status, body.error?.code];
}

describe('POST /send bodies', () => {
  describe('when Content-Length declares more than the limit', () => {
    it('answers a JSON 413 at once, without waiting for the body', async () => {
      chat = await startTestChat();
      const result = await exchange(
        portOf(chat.url),
        'POST /send HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000000000\r\n\r\n{',
        { timeoutMs: 3_000 },
      );
      const [answer] = parseAnswers(result.text);
      expect([answer?.status, errorCode(answer)]).toEqual([413, 'body_too_large']);
      expect(answer?.headers.connection).toBe('close');
      expect(result.ms).toBeLessThan(1_000);
    });
  });

  describe('when the charset is not UTF-8', () => {
    for (const type of [
      'application/json; charset=utf-16le',
      'application/json; charset=utf-7',
      'application/x-www-form-urlencoded; charset=iso-8859-1',
    ]) {
      it(`answers 415 to ${type}`, async () => {
        const body = type.includes('json') ? '{"text":"+ADw-script+AD4-"}' : 'text=hi';
        expect(await codeOf(await send(type, body))).toEqual([415, 'unsupported_media_type']);
      });
    }

    it('stores nothing', async () => {
      await send('application/json; charset=utf-7', '{"text":"+ADw-script+AD4-"}');
      const history = (await (await chat!.get('/history')).json()) as { messages: unknown[] };
      expect(history.messages).toEqual([]);
    });
  });

  describe('when the charset is UTF-8, in any case, quoted or not', () => {
    it('stores the message', async () => {
      for (const charset of ['utf-8', 'UTF-8', '"utf-8"']) {
        const res = await send(`application/json; charset=${charset}`, '{"text":"héllo"}');
        expect(res.status).toBe(200);
      }
    });
  });

  describe('when the body is not valid UTF-8', () => {
    it('answers invalid_unicode for JSON and for a form', async () => {
      const json = Buffer.concat([
        Buffer.from('{"text":"a'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}'),
      ]);
      expect(await codeOf(await send('application/json', json))).toEqual([400, 'invalid_unicode']);
      const form = Buffer.concat([Buffer.from('text=a'), Buffer.from([0xc3, 0x28])]);
      expect(await codeOf(await send('application/x-www-form-urlencoded', form))).toEqual([
        400,
        'invalid_unicode',
      ]);
      const history = (await (await chat!.get('/history')).json()) as { messages: unknown[] };
      expect(history.messages).toEqual([]);
    });
  });
});
