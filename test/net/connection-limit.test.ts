import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { connectionCap } from '../../server/net/connection-limit.ts';
import { startTestChat, type TestChat } from '../helpers/chat.ts';
import { errorCode, exchange, openSocket, parseAnswers, portOf } from '../helpers/raw-http.ts';
import { until } from '../helpers/wait.ts';
import { captureLog } from '../ops/log-capture.ts';

let chat: TestChat | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await chat?.close();
  chat = undefined;
});

/** What the server writes on a socket it refuses as it opens (it writes first, then closes). */
function refusalOn(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
    });
    socket.on('close', () => resolve(text));
    socket.on('error', () => {});
  });
}

const time = 'GET /time HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

describe('connections', () => {
  describe('when one address holds its cap of connections, each carrying a request', () => {
    it('refuses those past its cap with a JSON 429, logs and counts it, and serves others', async () => {
      const logs = captureLog('info');
      chat = await startTestChat(
        // The polls carry no client id: without the per-client share they may all wait.
        {
          maxConnectionsPerAddress: 40,
          maxIdlePerAddress: 0,
          maxConnections: 1_000,
          maxPollsPerClient: 0,
        },
        { log: logs.log },
      );
      const port = portOf(chat.url);
      for (let i = 0; i < 40; i += 1) {
        const socket = await openSocket(port);
        sockets.push(socket);
        socket.on('error', () => {});
        socket.write(`GET /recv?room=capped&since=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      }
      await until(() => chat!.hub.waiting === 40, 'the 40 polls to wait');
      const refused = await Promise.all(
        Array.from({ length: 60 }, async () => {
          const socket = await openSocket(port);
          sockets.push(socket);
          return parseAnswers(await refusalOn(socket))[0];
        }),
      );
      for (const answer of refused) {
        expect([answer?.status, errorCode(answer)]).toEqual([429, 'too_many_connections']);
        expect(answer?.headers['retry-after']).toBe('5');
      }
      const line = await logs.next((l) => l.reason === 'address', 'the refusal line');
      expect(line).toMatchObject({ level: 'warn', address: '127.0.0.1' });

      // Another address is served, and sees the refusals counted.
      const other = await exchange(
        port,
        'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
        {
          localAddress: '127.0.0.2',
        },
      );
      const [metrics] = parseAnswers(other.text);
      expect(metrics?.status).toBe(200);
      expect(metrics?.body).toMatch(/chat_connections_refused_total\{reason="address"\} 60/);
      expect(metrics?.body).toMatch(/chat_connections_open 4[01]/);

      // The address's own polls are still waiting, none closed to make room.
      expect(chat.hub.waiting).toBe(40);
    });
  });

  describe('when one address holds its cap of connections, most of them silent', () => {
    // A school or a carrier's NAT: one person's silent sockets must not lock the others out.
    it('closes its oldest silent one to let a newcomer in, never a waiting poll, and refuses none', async () => {
      chat = await startTestChat({
        maxConnectionsPerAddress: 40,
        maxIdlePerAddress: 0,
        maxConnections: 1_000,
      });
      const port = portOf(chat.url);
      const polls: Socket[] = [];
      for (let i = 0; i < 5; i += 1) {
        const socket = await openSocket(port);
        polls.push(socket);
        socket.on('error', () => {});
        socket.write(`GET /recv?room=nat&since=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      }
      await until(() => chat!.hub.waiting === 5, 'the 5 polls to wait');
      const silent: Socket[] = [];
      for (let i = 0; i < 35; i += 1) {
        const socket = await openSocket(port);
        socket.on('error', () => {});
        silent.push(socket);
      }
      sockets.push(...polls, ...silent);
      const answers = [];
      for (let i = 0; i < 20; i += 1) {
        const answer = await exchange(port, time, {
          until: (text) => text.includes('"time"') || text.includes('"error"'),
          timeoutMs: 5_000,
        });
        answers.push(parseAnswers(answer.text)[0]?.status);
      }
      expect(answers).toEqual(Array.from({ length: 20 }, () => 200));
      // Each answered newcomer closes in turn: the oldest silent one made room for them.
      await until(() => silent[0]!.destroyed, 'the oldest silent one to close');
      // At most one silent one per newcomer, oldest first.
      const closed = silent.filter((socket) => socket.destroyed).length;
      expect(closed).toBeLessThanOrEqual(20);
      expect(silent.slice(0, closed).every((socket) => socket.destroyed)).toBe(true);
      expect(polls.every((socket) => !socket.destroyed)).toBe(true);
      expect(chat.hub.waiting).toBe(5);
      const text = await (await chat.get('/metrics')).text();
      expect(text).toMatch(/chat_connections_idle_closed_total\{reason="address"\} [1-9]/);
      expect(text).not.toMatch(/chat_connections_refused_total\{reason="address"\}/);
    });
  });

  describe('when the process holds MAX_CONNECTIONS, each carrying a request', () => {
    it('refuses the next with a JSON 503 and logs that descriptors run low', async () => {
      const logs = captureLog('info');
      chat = await startTestChat(
        { maxConnectionsPerAddress: 0, maxConnections: 20 },
        { log: logs.log },
      );
      const port = portOf(chat.url);
      for (let i = 0; i < 20; i += 1) {
        const socket = await openSocket(port, `127.0.0.${10 + i}`);
        sockets.push(socket);
        socket.write(`GET /recv?room=full&since=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      }
      await until(() => chat!.hub.waiting === 20, 'the 20 polls to wait');
      await logs.next((l) => l.msg.includes('descriptors running low'), 'the low line');
      const socket = await openSocket(port, '127.0.0.3');
      sockets.push(socket);
      const [answer] = parseAnswers(await refusalOn(socket));
      expect([answer?.status, errorCode(answer)]).toEqual([503, 'connections_full']);
      await logs.next((l) => l.reason === 'total', 'the refusal line');
    });
  });

  describe('when the process holds MAX_CONNECTIONS, some silent or idle', () => {
    // A flood from many addresses, each under MAX_CONNECTIONS_PER_ADDRESS.
    it('closes the oldest one without a request to let the newcomer in, never a waiting poll', async () => {
      chat = await startTestChat({ maxConnections: 20 });
      const port = portOf(chat.url);
      const polls: Socket[] = [];
      for (let i = 0; i < 5; i += 1) {
        const socket = await openSocket(port, '127.0.0.9');
        polls.push(socket);
        socket.on('error', () => {});
        socket.write(`GET /recv?room=flood&since=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      }
      await until(() => chat!.hub.waiting === 5, 'the 5 polls to wait');
      const silent: Socket[] = [];
      for (let i = 0; i < 15; i += 1) {
        const socket = await openSocket(port, `127.0.0.${10 + (i % 5)}`);
        socket.on('error', () => {});
        silent.push(socket);
      }
      sockets.push(...polls, ...silent);
      const oldest = silent[0]!;
      const closed = new Promise((resolve) => oldest.once('close', resolve));
      const answer = await exchange(port, time, {
        localAddress: '127.0.0.50',
        until: (text) => text.includes('"time"'),
        timeoutMs: 5_000,
      });
      expect(parseAnswers(answer.text)[0]?.status).toBe(200);
      await closed;
      expect(silent.slice(1).every((socket) => !socket.destroyed)).toBe(true);
      expect(polls.every((socket) => !socket.destroyed)).toBe(true);
      expect(chat.hub.waiting).toBe(5);
      const text = await (await chat.get('/metrics')).text();
      expect(text).toMatch(/chat_connections_idle_closed_total\{reason="total"\} [1-9]/);
      expect(text).not.toMatch(/chat_connections_refused_total\{reason="total"\}/);
    });
  });

  describe('when an address holds more idle connections than MAX_IDLE_PER_ADDRESS', () => {
    it('closes its oldest idle one', async () => {
      chat = await startTestChat({ maxIdlePerAddress: 3 });
      const port = portOf(chat.url);
      const answered = async (socket: Socket) => {
        const data = new Promise((resolve) => socket.once('data', resolve));
        socket.write(time);
        await data;
      };
      for (let i = 0; i < 4; i += 1) sockets.push(await openSocket(port));
      const oldest = sockets[0]!;
      const closed = new Promise((resolve) => oldest.once('close', resolve));
      for (const socket of sockets) await answered(socket);
      await closed;
      expect(sockets.slice(1).every((socket) => !socket.destroyed)).toBe(true);
      const text = await (await chat.get('/metrics')).text();
      expect(text).toMatch(/chat_connections_idle_closed_total\{reason="address"\} 1/);
    });
  });

  describe('when the idle connections last answered a poll', () => {
    // A poll's end is heard on its request, not its response (pipelining.ts, `onDone`).
    it('closes its oldest idle one too', async () => {
      chat = await startTestChat({ maxIdlePerAddress: 3 });
      const port = portOf(chat.url);
      const polled = async (socket: Socket, i: number) => {
        const data = new Promise((resolve) => socket.once('data', resolve));
        // A client the room has not seen is answered at once, empty.
        socket.write(
          `GET /recv?room=idle&since=0&client=idle-${i} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
        );
        await data;
      };
      for (let i = 0; i < 4; i += 1) sockets.push(await openSocket(port));
      const oldest = sockets[0]!;
      const closed = new Promise((resolve) => oldest.once('close', resolve));
      for (const [i, socket] of sockets.entries()) await polled(socket, i);
      await closed;
      expect(sockets.slice(1).every((socket) => !socket.destroyed)).toBe(true);
      const text = await (await chat.get('/metrics')).text();
      expect(text).toMatch(/chat_connections_idle_closed_total\{reason="address"\} 1/);
    });
  });

  describe('when TRUST_PROXY trusts the peer', () => {
    it('does not cap its connections: it is the proxy', async () => {
      chat = await startTestChat({
        maxConnectionsPerAddress: 5,
        maxIdlePerAddress: 2,
        trustProxy: 'loopback',
      });
      const port = portOf(chat.url);
      for (let i = 0; i < 10; i += 1) sockets.push(await openSocket(port));
      const result = await exchange(port, time, { until: (text) => text.includes('"time"') });
      expect(parseAnswers(result.text)[0]?.status).toBe(200);
      expect(sockets.every((socket) => !socket.destroyed)).toBe(true);
    });
  });

  describe('the keep-alive timeout', () => {
    it("stays above nginx's upstream keep-alive by default, and a shorter one behind a proxy is warned of", async () => {
      chat = await startTestChat();
      expect(chat.server.keepAliveTimeout).toBe(65_000);
      await chat.close();
      const logs = captureLog('info');
      chat = await startTestChat(
        { keepAliveTimeoutMs: 30_000, trustProxy: 'loopback' },
        { log: logs.log },
      );
      expect(chat.server.keepAliveTimeout).toBe(30_000);
      const line = await logs.next(
        (l) => l.msg.startsWith('KEEP_ALIVE_TIMEOUT_MS=30000'),
        'the warning',
      );
      expect(line.level).toBe('warn');
    });
  });

  describe('MAX_CONNECTIONS by default', () => {
    it('stays below the descriptor limit', () => {
      expect(connectionCap(500)).toBe(500);
      const auto = connectionCap(undefined);
      expect(auto).toBeGreaterThanOrEqual(64);
    });
  });
});
