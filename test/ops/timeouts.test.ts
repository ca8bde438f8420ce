/**
 * Slow uploads are cut within seconds; long-polls are never cut
 * (BODY_TIMEOUT_MS, HEADERS_TIMEOUT_MS; server/process/server.ts). Over raw sockets,
 * as a hostile or a slow client would send.
 */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestChat, type TestChat, until } from '../helpers/chat.ts';

let chat: TestChat | undefined;
afterEach(async () => {
  await chat?.close();
  chat = undefined;
});

const LIMIT_MS = 1_000;

/** A raw connection that records what the server sends and when it hangs up. */
async function rawConnection(url: string) {
  const socket: Socket = connect(Number(new URL(url).port), '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    received += chunk;
  });
  // The server hangs up while the client may still be dripping: a byte that
  // reaches the closed socket draws a reset, so 'read ECONNRESET' is an
  // expected end here, not a failure. `once(socket, 'close')` would reject on
  // that 'error'; 'close' itself always follows it.
  socket.on('error', () => {});
  const closed = new Promise<number>((resolve) => {
    socket.once('close', () => resolve(performance.now()));
  });
  return {
    socket,
    closed,
    get received() {
      return received;
    },
  };
}

/** Writes one byte of `text` every `everyMs` until the socket closes or the text ends. */
function drip(socket: Socket, text: string, everyMs: number): NodeJS.Timeout {
  let at = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || at >= text.length) clearInterval(timer);
    else socket.write(text[at++]!);
  }, everyMs);
  return timer;
}

describe('a request that arrives slowly', () => {
  describe('with a body dripped a byte at a time', () => {
    it('is cut with 408 within the body timeout, and nothing is stored', async () => {
      chat = await startTestChat({ bodyTimeoutMs: LIMIT_MS, headersTimeoutMs: LIMIT_MS });
      const body = JSON.stringify({ text: 'dripped over a long time' });
      const connection = await rawConnection(chat.url);
      const start = performance.now();
      connection.socket.write(
        `POST /send HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      // All of it would take 100 × 50 ms = 5 s.
      const timer = drip(connection.socket, body.padEnd(100), 50);
      const cutAt = await connection.closed;
      clearInterval(timer);
      expect(connection.received).toMatch(/^HTTP\/1\.1 408 /);
      // The limit, plus Node's checking interval, plus slack for a busy machine.
      expect(cutAt - start).toBeLessThan(LIMIT_MS + 1_500);
      expect(await chat.store.after('main', 0, 10)).toEqual([]);
    });
  });

  describe('with headers dripped a line at a time', () => {
    it('is cut with 408 within the header timeout', async () => {
      chat = await startTestChat({ bodyTimeoutMs: 5_000, headersTimeoutMs: LIMIT_MS });
      const connection = await rawConnection(chat.url);
      const start = performance.now();
      connection.socket.write('GET /time HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      const timer = drip(connection.socket, 'X-Slow: yes\r\n'.repeat(50), 20);
      const cutAt = await connection.closed;
      clearInterval(timer);
      expect(connection.received).toMatch(/^HTTP\/1\.1 408 /);
      expect(cutAt - start).toBeLessThan(LIMIT_MS + 1_500);
    });
  });
});

describe('a long-poll held longer than the body and header timeouts', () => {
  it('is answered normally at the poll timeout, not cut', async () => {
    const pollTimeoutMs = 3 * LIMIT_MS;
    chat = await startTestChat({
      bodyTimeoutMs: LIMIT_MS,
      headersTimeoutMs: LIMIT_MS,
      pollTimeoutMs,
    });
    const connection = await rawConnection(chat.url);
    const start = performance.now();
    connection.socket.write('GET /recv?since=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await until(
      () => connection.received.includes('\r\n\r\n{'),
      'the answer',
      pollTimeoutMs + 3_000,
    );
    const elapsed = performance.now() - start;
    expect(connection.received).toMatch(/^HTTP\/1\.1 200 /);
    expect(connection.received).toContain('{"messages":[],"cursor":0');
    expect(elapsed).toBeGreaterThanOrEqual(pollTimeoutMs - 50);
    connection.socket.destroy();
  });
});
