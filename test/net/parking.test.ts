/**
 * Parking (server/net/parking.ts): a poll that waits in a quiet room holds
 * its connection without Node's HTTP parser, and the connection works as
 * any other before, during and after: keep-alive, pipelining refused,
 * the client leaving, the keep-alive timeout, shutdown. On raw sockets, so
 * each test knows which connection carries what.
 */
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../../server/core/config.ts';
import { startTestChat, type TestChat } from '../helpers/chat.ts';
import { type ChatClient, chatClient, gauge, untilGauge } from '../helpers/http-client.ts';
import {
  errorCode,
  openSocket,
  parseAnswers,
  portOf,
  type RawAnswer,
} from '../helpers/raw-http.ts';
import { until } from '../helpers/wait.ts';

let chat: TestChat | undefined;
/** Reads `/metrics` on connections of its own. */
let metrics: ChatClient | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  metrics?.close();
  metrics = undefined;
  await chat?.close();
  chat = undefined;
});

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;

/** A raw connection that collects what the server writes. */
async function connection(port: number) {
  const socket = await openSocket(port);
  sockets.push(socket);
  let text = '';
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
  });
  socket.on('error', () => {});
  return {
    socket,
    closed,
    answers: (): RawAnswer[] => parseAnswers(text),
    /** Resolves once `count` answers have come on this connection. */
    async untilAnswers(count: number, what: string): Promise<RawAnswer[]> {
      await until(async () => parseAnswers(text).length >= count, what);
      return parseAnswers(text);
    },
  };
}

const metric = async (name: string) => (await gauge(metrics!, name)) ?? Number.NaN;
const parkedNow = () => metric('chat_connections_parked');
const untilParked = (count: number) =>
  untilGauge(metrics!, 'chat_connections_parked', (parked) => parked === count);

async function start(overrides: Partial<Config> = {}): Promise<TestChat> {
  chat = await startTestChat({ pollTimeoutMs: 20_000, ...overrides });
  metrics = chatClient(chat.url);
  return chat;
}

async function sendText(running: TestChat, room: string, text: string): Promise<void> {
  const sent = await running.post('/send', { room, nickname: 'Ann', text });
  expect(sent.status).toBe(200);
}

describe('a poll waiting in a quiet room (POLL_PARK_QUIET_MS)', () => {
  it('waits parked, is answered, and its connection serves the next requests, parked again', async () => {
    const running = await start();
    const client = await connection(portOf(running.url));
    client.socket.write(get('/recv?room=q&since=0'));
    await untilParked(1);
    await sendText(running, 'q', 'one');
    const [answer] = await client.untilAnswers(1, 'the poll to be answered');
    expect(answer!.status).toBe(200);
    expect(JSON.parse(answer!.body).messages.map((m: { text: string }) => m.text)).toEqual(['one']);
    // The same connection, idle and still parked, takes the next request.
    client.socket.write(get('/time'));
    await client.untilAnswers(2, '/time on the same connection');
    // One message after a quiet while: the room is still quiet, the next poll parks too.
    client.socket.write(get('/recv?room=q&since=1'));
    await until(async () => running.hub.waiting === 1, 'the second poll to wait');
    await untilParked(1);
    await sendText(running, 'q', 'two');
    const answers = await client.untilAnswers(3, 'the second poll to be answered');
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(JSON.parse(answers[2]!.body).messages.map((m: { text: string }) => m.text)).toEqual([
      'two',
    ]);
    expect(client.socket.destroyed).toBe(false);
  });

  it('refuses a request written behind it, as one pipelined in the same write, and stores nothing', async () => {
    const running = await start();
    const client = await connection(portOf(running.url));
    client.socket.write(get('/recv?room=p&since=0'));
    await untilParked(1);
    const body = JSON.stringify({ text: 'behind the poll' });
    client.socket.write(
      'POST /send HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await client.closed;
    const answers = client.answers();
    expect(answers.map((a) => [a.status, errorCode(a)])).toEqual([
      [400, 'pipelining_refused'],
      [400, 'pipelining_refused'],
    ]);
    expect(answers[1]!.headers.connection).toBe('close');
    const history = (await (await running.get('/history?room=p')).json()) as {
      messages: unknown[];
    };
    expect(history.messages).toEqual([]);
    expect(running.hub.waiting).toBe(0);
    expect(await metric('chat_pipelined_refused_total')).toBe(1);
  });

  it('is let go when its client leaves', async () => {
    const running = await start();
    const client = await connection(portOf(running.url));
    client.socket.write(get('/recv?room=l&since=0'));
    await untilParked(1);
    client.socket.destroy();
    await until(async () => running.hub.waiting === 0, 'the hub to let the poll go');
    await untilParked(0);
  });

  it('idles after its answer until the keep-alive timeout, not cut as a request whose headers are late', async () => {
    // Headers due within 200 ms, checked every 100 ms: an idle connection
    // counted as a request in progress would get a 408 long before it closes.
    const running = await start({
      headersTimeoutMs: 200,
      bodyTimeoutMs: 200,
      keepAliveTimeoutMs: 1_500,
    });
    const client = await connection(portOf(running.url));
    client.socket.write(get('/recv?room=k&since=0'));
    await untilParked(1);
    await sendText(running, 'k', 'one');
    await client.untilAnswers(1, 'the poll to be answered');
    const answeredAt = performance.now();
    await client.closed;
    const idleMs = performance.now() - answeredAt;
    // Closed by the keep-alive timeout (Node adds up to a second of its own), with no 408 written.
    expect(idleMs).toBeGreaterThan(1_400);
    expect(client.answers().map((a) => a.status)).toEqual([200]);
    await untilParked(0);
  });

  it('closes at shutdown when idle after its answer, without waiting for the keep-alive timeout', async () => {
    const running = await start({ keepAliveTimeoutMs: 120_000, shutdownDrainMs: 0 });
    const client = await connection(portOf(running.url));
    client.socket.write(get('/recv?room=s&since=0'));
    await untilParked(1);
    await sendText(running, 's', 'one');
    await client.untilAnswers(1, 'the poll to be answered');
    const started = performance.now();
    await running.close();
    chat = undefined;
    await client.closed;
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('answers a parked poll at shutdown and closes its connection', async () => {
    const running = await start({ shutdownDrainMs: 0 });
    const client = await connection(portOf(running.url));
    client.socket.write(get('/recv?room=d&since=0'));
    await untilParked(1);
    await running.close();
    chat = undefined;
    await client.closed;
    const [answer] = client.answers();
    expect(answer!.status).toBe(200);
    expect(answer!.headers.connection).toBe('close');
  });

  it('holds a new connection without a parser until it speaks, then serves it', async () => {
    const running = await start();
    const client = await connection(portOf(running.url));
    await untilParked(1);
    client.socket.write(get('/time'));
    const [answer] = await client.untilAnswers(1, '/time');
    expect(answer!.status).toBe(200);
    expect(await parkedNow()).toBe(0);
  });

  it('answers a new connection that says nothing with 408 at the headers timeout', async () => {
    const running = await start({ headersTimeoutMs: 300, bodyTimeoutMs: 300 });
    const client = await connection(portOf(running.url));
    const opened = performance.now();
    await client.closed;
    expect(performance.now() - opened).toBeGreaterThan(250);
    const [answer] = client.answers();
    expect([answer?.status, errorCode(answer)]).toEqual([408, 'request_timeout']);
    expect(await metric('chat_http_client_errors_total{code="request_timeout"}')).toBe(1);
  });

  it('parks nothing when POLL_PARK_QUIET_MS is 0', async () => {
    const running = await start({ pollParkQuietMs: undefined });
    const client = await connection(portOf(running.url));
    client.socket.write(get('/recv?room=o&since=0'));
    await until(async () => running.hub.waiting === 1, 'the poll to wait');
    expect(await parkedNow()).toBe(0);
    // Nor a new connection.
    await connection(portOf(running.url));
    expect(await parkedNow()).toBe(0);
  });
});
