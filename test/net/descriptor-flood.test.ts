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
    // Idle connections are reclaimed before an address is refused
    // (server/net/connection-limit.ts): the flood's oldest make room for
    // its newest, so it never holds more than its cap, nor the descriptors.
    it('holds at most its cap of them, closing its oldest, and still serves other addresses', async () => {
      server = await startServerProcess({
        descriptorLimit: 1_024,
        env: {
          DATABASE_URL: 'memory:',
          HEADERS_TIMEOUT_MS: '30000',
          BODY_TIMEOUT_MS: '30000',
          // Under the descriptor limit, so the address's cap, not the process's, is what holds.
          MAX_CONNECTIONS_PER_ADDRESS: '256',
        },
      });
      const port = server.port!;
      let closed = 0;
      let opened = 0;
      const flood = Array.from({ length: 1_100 }, async () => {
        // On a loaded machine a few of 1,100 connects at once may not get
        // through the listen backlog: the count below is of those that did.
        const socket = await openSocket(port).catch(() => undefined);
        if (!socket) return;
        opened += 1;
        sockets.push(socket);
        socket.on('error', () => {});
        socket.on('close', () => {
          closed += 1;
        });
      });
      await Promise.all(flood);
      expect(opened).toBeGreaterThan(2 * 256);

      const started = performance.now();
      const time = await exchange(port, 'GET /time HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', {
        localAddress: '127.0.0.2',
        until: (text) => text.includes('"time"'),
        timeoutMs: 5_000,
      });
      const bystanderMs = performance.now() - started;
      expect(parseAnswers(time.text)[0]?.status).toBe(200);
      expect(bystanderMs).toBeLessThan(1_000);

      const counter = async (name: string) => {
        const metrics = await exchange(
          port,
          'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
          { localAddress: '127.0.0.3' },
        );
        const found = new RegExp(`${name}\\{reason="address"\\} (\\d+)`).exec(
          parseAnswers(metrics.text)[0]?.body ?? '',
        );
        return Number(found?.[1] ?? 0);
      };
      // The cap (256) holds: every connection past it closed one of the
      // flood's, and 256 stay open. Most are closed by the cap (the counter).
      // Not always all: one CI run (Node 24) counted 768 of 844, exactly the
      // descriptor limit less the cap, so the rest were likely accepted at
      // the limit and closed by libuv (its EMFILE reserve), which the
      // counter does not see.
      await expect.poll(() => closed, { timeout: 10_000 }).toBe(opened - 256);
      const reclaimed = await counter('chat_connections_idle_closed_total');
      expect(reclaimed).toBeGreaterThan((opened - 256) / 2);
      expect(reclaimed).toBeLessThanOrEqual(opened - 256);
      expect(await counter('chat_connections_refused_total')).toBe(0);
      console.log(
        `descriptor flood: ${closed} reclaimed, bystander /time ${bystanderMs.toFixed(0)} ms`,
      );
    }, 60_000);
  });
});
