import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type ServerProcess, startServerProcess } from '../helpers/processes.ts';
import { exchange, openSocket, parseAnswers } from '../helpers/raw-http.ts';

let server: ServerProcess | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await server?.stop();
  server = undefined;
});

describe('a descriptor flood', () => {
  describe('when one address opens 1,100 idle connections to a server under ulimit -n 1024', () => {
    it('refuses it, logs and counts that, and still serves other addresses', async () => {
      server = await startServerProcess({
        descriptorLimit: 1_024,
        env: { DATABASE_URL: 'memory:', HEADERS_TIMEOUT_MS: '30000', BODY_TIMEOUT_MS: '30000' },
      });
      const port = server.port!;
      const logged = server.nextLine(/"reason":"address"/, 20_000);
      let refused = 0;
      const flood = Array.from({ length: 1_100 }, async () => {
        const socket = await openSocket(port).catch(() => undefined);
        if (!socket) return;
        sockets.push(socket);
        socket.on('error', () => {});
        socket.on('data', (chunk) => {
          if (chunk.toString().startsWith('HTTP/1.1 429')) refused += 1;
        });
      });
      await Promise.all(flood);
      const line = JSON.parse((await logged).input!) as Record<string, unknown>;
      expect(line).toMatchObject({ level: 'warn', address: '127.0.0.1' });

      const started = performance.now();
      const time = await exchange(port, 'GET /time HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', {
        localAddress: '127.0.0.2',
        until: (text) => text.includes('"time"'),
        timeoutMs: 5_000,
      });
      const bystanderMs = performance.now() - started;
      console.log(
        `descriptor flood: ${refused} refused, bystander /time ${bystanderMs.toFixed(0)} ms`,
      );
      expect(parseAnswers(time.text)[0]?.status).toBe(200);
      expect(bystanderMs).toBeLessThan(1_000);

      const metrics = await exchange(
        port,
        'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
        { localAddress: '127.0.0.3' },
      );
      const counted = /chat_connections_refused_total\{reason="address"\} (\d+)/.exec(
        parseAnswers(metrics.text)[0]?.body ?? '',
      );
      expect(Number(counted?.[1])).toBe(1_100 - 256);
    }, 60_000);
  });
});
