import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type ServerProcess, startServerProcess } from '../helpers/processes.ts';
import { exchange, openSocket, parseAnswers } from '../helpers/raw-http.ts';

/** Connects in flight at once, well within Node's listen backlog (511). */
const WAVE = 64;

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
      const connect = async () => {
        const socket = await openSocket(port);
        opened += 1;
        sockets.push(socket);
        socket.on('error', () => {});
        socket.on('close', () => {
          closed += 1;
        });
      };
      // In waves, each within the listen backlog: past it, on a loaded
      // machine, the kernel drops the handshake's last step, and the client
      // believes in a connection the server never accepts (and so never
      // closes), which would look like a connection held past the cap.
      for (let wave = 0; wave < 1_100; wave += WAVE) {
        await Promise.all(Array.from({ length: Math.min(WAVE, 1_100 - wave) }, connect));
      }
      expect(opened).toBe(1_100);

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
      // flood's, counted, and 256 stay open.
      await expect.poll(() => closed, { timeout: 10_000 }).toBe(opened - 256);
      expect(await counter('chat_connections_idle_closed_total')).toBe(opened - 256);
      expect(await counter('chat_connections_refused_total')).toBe(0);
      console.log(
        `descriptor flood: ${closed} reclaimed, bystander /time ${bystanderMs.toFixed(0)} ms`,
      );
    }, 60_000);
  });
});
