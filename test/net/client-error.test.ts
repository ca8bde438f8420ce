import { afterEach, describe, expect, it } from 'vitest';
import { startTestChat, type TestChat } from '../helpers/chat.ts';
import { errorCode, exchange, parseAnswers, portOf } from '../helpers/raw-http.ts';

let chat: TestChat | undefined;
afterEach(async () => {
  await chat?.close();
  chat = undefined;
});

async function answerTo(raw: string) {
  chat ??= await startTestChat({ headersTimeoutMs: 300, bodyTimeoutMs: 300 });
  const result = await exchange(portOf(chat.url), raw, { timeoutMs: 3_000 });
  expect(result.closed).toBe(true);
  const [answer] = parseAnswers(result.text);
  expect(answer?.headers['content-type']).toBe('application/json; charset=utf-8');
  return answer!;
}

describe("errors from Node's HTTP layer", () => {
  describe('when a header is malformed', () => {
    it('answers a JSON 400', async () => {
      const answer = await answerTo(
        'GET /time HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: x\r\n\r\n',
      );
      expect([answer.status, errorCode(answer)]).toEqual([400, 'bad_request']);
    });
  });

  describe('when a request has both Content-Length and Transfer-Encoding', () => {
    it('answers a JSON 400', async () => {
      const answer = await answerTo(
        'POST /send HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      );
      expect([answer.status, errorCode(answer)]).toEqual([400, 'bad_request']);
    });
  });

  describe('when Host is missing', () => {
    it('answers a JSON 400', async () => {
      const answer = await answerTo('GET /time HTTP/1.1\r\n\r\n');
      expect([answer.status, errorCode(answer)]).toEqual([400, 'bad_request']);
    });
  });

  describe('when the headers are too large', () => {
    it('answers a JSON 431', async () => {
      const answer = await answerTo(
        `GET /time HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      );
      expect([answer.status, errorCode(answer)]).toEqual([431, 'headers_too_large']);
    });
  });

  describe('when the headers do not arrive in time', () => {
    it('answers a JSON 408', async () => {
      const answer = await answerTo('GET /time HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      expect([answer.status, errorCode(answer)]).toEqual([408, 'request_timeout']);
    });
  });

  describe('when Expect names something other than 100-continue', () => {
    it('answers a JSON 417', async () => {
      const answer = await answerTo(
        'GET /time HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: something\r\n\r\n',
      );
      expect([answer.status, errorCode(answer)]).toEqual([417, 'expectation_failed']);
    });
  });

  describe('when a client sends CONNECT', () => {
    it('answers a JSON 405', async () => {
      const answer = await answerTo(
        'CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n',
      );
      expect([answer.status, errorCode(answer)]).toEqual([405, 'method_not_allowed']);
    });
  });

  it('counts them in the metrics', async () => {
    await answerTo('GET /time HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: x\r\n\r\n');
    const text = await (await chat!.get('/metrics')).text();
    expect(text).toMatch(/chat_http_client_errors_total\{code="bad_request"\} 1/);
  });
});
