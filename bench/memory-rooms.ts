/**
 * `npm run bench:rooms [-- --rooms=50000 --settle=60]`: what strangers'
 * rooms cost a server once they are gone.
 *
 * A chat server (SQLite on tmpfs, sends unlimited) gets, in each of N new
 * rooms, one message and one poll that its client abandons at once: the
 * cheapest way for anyone to make a server remember room names. Then the
 * server is left alone for `--settle` seconds (it drops a room nobody
 * watches after `ROOM_IDLE_MS`, 30 s by default) and its resident memory is
 * compared with what it used before. The target: less than 32 MB more.
 *
 * It prints the figures and exits 1 when the target is missed. Traffic goes
 * to 127.0.0.1 only, bounded by `--rooms`.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { readCli } from '../scripts/cli.ts';
import { launchChat } from '../test/helpers/launch.ts';
import { rssBytes } from './lib/proc.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = readCli({
  usage: `usage: npm run bench:rooms [-- --rooms=50000] [-- --settle=60]

What rooms that strangers opened and left cost a server once they are gone.

  --rooms=N      rooms to open, one message and one abandoned poll each (default 50000)
  --settle=S     seconds the server is left alone before its memory is read (default 60)
  -h, --help     this help`,
  options: { rooms: { type: 'string' }, settle: { type: 'string' } },
});
const ROOMS = cli.integer('rooms', 50_000, { min: 1 });
const SETTLE_S = cli.integer('settle', 60);
const IN_FLIGHT = 64;
const TARGET_MB = 32;
const MB = 1024 * 1024;

const scratch = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'chat-rooms-'));
const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });

function call(port: number, method: string, path: string, body?: string, abort = false) {
  return new Promise<number>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: abort ? false : agent,
        headers: body ? { 'content-type': 'application/json' } : {},
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (abort) resolve(0);
      else reject(error);
    });
    if (abort) {
      // The poll reaches the server, then its client goes away.
      req.on('socket', (socket) => socket.on('connect', () => setImmediate(() => req.destroy())));
    }
    req.end(body);
  });
}

async function startServer(): Promise<{ child: ChildProcess; port: number }> {
  const { child, listening } = await launchChat({
    command: process.execPath,
    args: ['--import', 'tsx', 'server/main.ts'],
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(scratch, 'chat.sqlite')}`,
      SEND_RATE: '0',
      SEND_KB_PER_HOUR: '0',
      HISTORY_RATE: '0',
      SERVE_STATIC: 'false',
      LOG_LEVEL: 'info',
      METRICS: 'off',
    },
    // tsx compiles the server first, on a machine maybe busy with another bench.
    deadlineMs: 120_000,
  });
  return { child, port: 'port' in listening ? listening.port : 0 };
}

async function main(): Promise<void> {
  const { child, port } = await startServer();
  try {
    // Warm up: the code paths once, so the baseline is not an idle cold start.
    for (let i = 0; i < 200; i += 1) {
      await call(port, 'POST', '/send', JSON.stringify({ room: 'warm', text: `w${i}` }));
      await call(port, 'GET', `/recv?room=warm&since=${i}`);
    }
    await sleep(2_000);
    const before = rssBytes(child.pid!);

    const started = Date.now();
    let next = 0;
    const worker = async () => {
      while (next < ROOMS) {
        const room = `stranger-${next++}`;
        await call(port, 'POST', '/send', JSON.stringify({ room, text: 'x'.repeat(200) }));
        await call(
          port,
          'GET',
          `/recv?room=${room}&since=1&client=stranger-client`,
          undefined,
          true,
        );
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    const peak = rssBytes(child.pid!);
    const sent = ((Date.now() - started) / 1000).toFixed(1);
    process.stdout.write(
      `${ROOMS} rooms, each with a message and an abandoned poll, in ${sent} s\n`,
    );
    agent.destroy();

    await sleep(SETTLE_S * 1_000);
    const after = rssBytes(child.pid!);
    const growth = (after - before) / MB;
    const lines = [
      `RSS before: ${(before / MB).toFixed(1)} MB`,
      `RSS right after the rooms: ${(peak / MB).toFixed(1)} MB`,
      `RSS ${SETTLE_S} s later: ${(after / MB).toFixed(1)} MB`,
      `kept: ${growth.toFixed(1)} MB (target < ${TARGET_MB} MB): ${growth < TARGET_MB ? 'met' : 'MISSED'}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    process.exitCode = growth < TARGET_MB ? 0 : 1;
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
