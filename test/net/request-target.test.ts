/**
 * The shapes of a request's target and host (server/net/host-check.ts):
 * absolute-form targets routed by their path on every route, one `Host`
 * only, and a chat bound to loopback answering only loopback names when
 * `ALLOWED_HOSTS` is unset (DNS rebinding).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaults } from '../../server/core/config.ts';
import { allowedHosts, isLoopback } from '../../server/net/host-check.ts';
import { startTestChat, type TestChat } from '../helpers/chat.ts';
import { errorCode, exchange, parseAnswers, portOf, type RawAnswer } from '../helpers/raw-http.ts';

let chat: TestChat;
beforeAll(async () => {
  chat = await startTestChat();
  await chat.send({ text: 'hello' });
});
afterAll(() => chat.close());

async function ask(head: string, body = ''): Promise<RawAnswer> {
  const result = await exchange(
    portOf(chat.url),
    `${head}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return parseAnswers(result.text)[0]!;
}

describe('an absolute-form target (GET http://host/path)', () => {
  const origin = () => `http://127.0.0.1:${portOf(chat.url)}`;

  it('is routed by its path on the lane routes', async () => {
    const recv = await ask(`GET ${origin()}/recv?since=0 HTTP/1.1\r\nHost: 127.0.0.1`);
    expect(recv.status).toBe(200);
    expect(JSON.parse(recv.body).messages[0].text).toBe('hello');
    const time = await ask(`GET ${origin()}/time HTTP/1.1\r\nHost: 127.0.0.1`);
    expect(time.status).toBe(200);
    const send = await ask(
      `POST ${origin()}/send HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json`,
      JSON.stringify({ text: 'absolute' }),
    );
    expect(send.status).toBe(200);
    expect(JSON.parse(send.body).message.text).toBe('absolute');
  });

  it("is routed by its path on the app's routes, in any spelling", async () => {
    const history = await ask(`GET ${origin()}/history?limit=1 HTTP/1.1\r\nHost: 127.0.0.1`);
    expect(history.status).toBe(200);
    expect(JSON.parse(history.body).messages).toHaveLength(1);
    expect((await ask(`GET HTTP://127.0.0.1/HEALTH HTTP/1.1\r\nHost: 127.0.0.1`)).status).toBe(200);
    expect((await ask(`GET ${origin()}/Time/ HTTP/1.1\r\nHost: 127.0.0.1`)).status).toBe(200);
  });

  it('names its host in place of Host (RFC 9112, 3.2.2)', async () => {
    const answer = await ask(`GET http://evil.example/time HTTP/1.1\r\nHost: 127.0.0.1`);
    expect([answer.status, errorCode(answer)]).toEqual([421, 'host_not_allowed']);
  });
});

describe('the Host header', () => {
  it('answers a second one with 400', async () => {
    const answer = await ask('GET /time HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example');
    expect([answer.status, errorCode(answer)]).toEqual([400, 'bad_request']);
    expect(answer.headers.connection).toBe('close');
  });
});

describe('bound to loopback with ALLOWED_HOSTS unset', () => {
  it('answers localhost and loopback names and addresses', async () => {
    for (const host of [
      'localhost',
      'LOCALHOST:3000',
      'chat.localhost',
      '127.0.0.1:80',
      '127.0.0.5',
      '[::1]:3000',
    ]) {
      const answer = await ask(`GET /time HTTP/1.1\r\nHost: ${host}`);
      expect([host, answer.status]).toEqual([host, 200]);
    }
  });

  it('refuses another host (421) and another site’s Origin (403)', async () => {
    for (const host of [
      'evil.example',
      'evil.example:3000',
      '127.0.0.1.evil.example',
      '10.0.0.1',
    ]) {
      const answer = await ask(`GET /history HTTP/1.1\r\nHost: ${host}`);
      expect([host, answer.status, errorCode(answer)]).toEqual([host, 421, 'host_not_allowed']);
    }
    for (const origin of ['http://evil.example', 'https://evil.example:3000', 'null']) {
      const answer = await ask(
        `GET /recv?since=0 HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: ${origin}`,
      );
      expect([origin, answer.status, errorCode(answer)]).toEqual([origin, 403, 'cross_site']);
    }
    const own = await ask(`GET /time HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost:3000`);
    expect(own.status).toBe(200);
  });

  it('is the rule for loopback binds with no proxy only: elsewhere, behind a proxy, or with ALLOWED_HOSTS, the list decides', () => {
    const config = { ...defaults, port: 3000 };
    expect(allowedHosts({ ...config, host: '127.0.0.1' })?.('evil.example')).toBe(false);
    expect(allowedHosts({ ...config, host: '::1' })?.('[::1]')).toBe(true);
    expect(allowedHosts({ ...config, host: undefined })).toBeUndefined();
    expect(allowedHosts({ ...config, host: '0.0.0.0' })).toBeUndefined();
    expect(allowedHosts({ ...config, host: '192.168.1.10' })).toBeUndefined();
    expect(allowedHosts({ ...config, port: '/run/chat.sock', host: undefined })).toBeUndefined();
    // Behind a proxy on the machine (every shipped configuration), visitors name the site.
    expect(allowedHosts({ ...config, host: '127.0.0.1', trustProxy: 'loopback' })).toBeUndefined();
    const listed = allowedHosts({ ...config, host: '127.0.0.1', allowedHosts: ['chat.example'] });
    expect([listed?.('chat.example'), listed?.('localhost')]).toEqual([true, false]);
    expect(['localhost', '127.1.2.3', '[::1]', '::1'].every(isLoopback)).toBe(true);
    expect(['localhost.evil', '128.0.0.1', '::2', undefined].some(isLoopback)).toBe(false);
  });
});
