/**
 * `npx tsx bench/threads-sustained.ts [--workers=1] [--rounds=3] [--warmups=3] [--subscribers=100] [--build=DIR] [--db=disk|tmpfs]`
 * (after `npm run build`): runs T6's workload (the subscribers re-polling
 * with their cursor, 4 senders each waiting for its acknowledgement) at
 * the chat, and prints where the server's CPU went, per kind of thread,
 * in µs per delivery, from `/proc/PID/task/*` (Linux only):
 * - `MAIN`: a process's JavaScript thread (the primary's, each worker's,
 *   added up); `WorkerThread`: the SQLite threads; `node-V8Worker`: V8's
 *   helpers (garbage collection, compilation);
 * - `[sys]`: the kernel's share of it; `[ctx]` and `[preempted]`: context
 *   switches per 1,000 deliveries, given up (waiting) and taken (preempted).
 *
 * Why: a profile samples one JavaScript thread per process, and profiling
 * three processes on two cores slows them unevenly; this reads what the
 * kernel counted, without slowing anything. `--subscribers=1` measures the
 * send path alone (a delivery is then about a send).
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readCli, usageError } from '../scripts/cli.ts';
import { LoadGenerator } from './lib/load.ts';
import { processTree } from './lib/proc.ts';
import { type DbPlace, dbPlace, describeScratch, makeScratch } from './lib/scratch.ts';
import { chatSpec, startServer } from './lib/servers.ts';
import { sustained, sustainedSummary } from './scenarios/polls.ts';

const usage = {
  usage: `usage: npx tsx bench/threads-sustained.ts [--workers=1] [--rounds=3] [--warmups=3]
         [--subscribers=100] [--build=DIR] [--db=disk|tmpfs]      (after npm run build)

T6's workload at the chat; the server's CPU per kind of thread, in µs per delivery.

  --workers=N      WORKERS (default 1)
  --rounds=N       measured runs (default 3)
  --warmups=N      full-size runs before them (default 3)
  --subscribers=N  re-polling subscribers (default 100; 1: the send path alone)
  --build=DIR      the built checkout to run (default this one), under its start script's Node flags
  --db=disk|tmpfs  the SQLite file on the disk of data/ (default) or in /dev/shm
  -h, --help       this help`,
  options: {
    workers: { type: 'string' },
    rounds: { type: 'string' },
    warmups: { type: 'string' },
    subscribers: { type: 'string' },
    build: { type: 'string' },
    db: { type: 'string' },
  },
} as const;
const cli = readCli(usage);
const workers = cli.integer('workers', 1, { min: 1 });
const rounds = cli.integer('rounds', 3, { min: 1 });
const warmups = cli.integer('warmups', 3);
const shape = {
  subscribers: cli.integer('subscribers', 100, { min: 1 }),
  senders: 4,
  messages: 2_000,
};
const root = resolve(cli.values.build ?? resolve(import.meta.dirname, '..'));
let place: DbPlace;
try {
  place = dbPlace(cli.values.db);
} catch (error) {
  usageError(usage, (error as Error).message);
}

/** CPU milliseconds and context switches of every thread of the tree, by kind. */
function threads(primary: number): Map<string, number> {
  const out = new Map<string, number>();
  const add = (key: string, value: number) => out.set(key, (out.get(key) ?? 0) + value);
  for (const pid of processTree(primary)) {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
        const switches = (what: string) =>
          Number(new RegExp(`^${what}_ctxt_switches:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
        const key = `${pid === primary ? (workers > 1 ? 'primary' : 'chat') : 'workers'} ${tid === String(pid) ? 'MAIN' : name}`;
        // utime and stime, in ticks of 10 ms.
        add(key, (Number(fields[11]) + Number(fields[12])) * 10);
        add(`${key} [sys]`, Number(fields[12]) * 10);
        add(`${key} [ctx]`, switches('voluntary'));
        add(`${key} [preempted]`, switches('nonvoluntary'));
      } catch {
        // The thread ended while we looked.
      }
    }
  }
  return out;
}

const scratch = makeScratch(place, 'threads-sustained');
const spec = chatSpec('chat', `chat (${root}, WORKERS=${workers})`, {
  databaseUrl: `sqlite:${join(scratch.dir, 'chat.sqlite')}`,
  workers,
});
// The build's own entry point and bench routes, under its start script's flags, as compare-builds.ts runs it.
const { nodeFlags } = (await import(join(root, 'dist/server/process/node-flags.js'))) as {
  nodeFlags: readonly string[];
};
spec.argv = [
  spec.argv[0]!,
  ...nodeFlags,
  ...spec.argv
    .slice(1)
    .map((arg) => (arg.startsWith('./bench/') || arg.startsWith('dist/') ? join(root, arg) : arg)),
];
const gen = new LoadGenerator();
const server = await startServer(spec);
try {
  for (let i = 0; i < warmups; i++) await sustained(server, gen, shape);
  const before = threads(server.pid);
  let delivered = 0;
  for (let r = 1; r <= rounds; r++) {
    const row = await sustained(server, gen, shape);
    delivered += row.delivered;
    console.log(`round ${r}: ${row.sendsPerSec} sends/s, ${sustainedSummary(row)}`);
  }
  const after = threads(server.pid);
  console.log(`\n${spec.label}, ${describeScratch(scratch)}: per delivery (switches per 1,000)`);
  let total = 0;
  const rows = [...after].map(([key, value]) => [key, value - (before.get(key) ?? 0)] as const);
  for (const [key, value] of rows.sort((a, b) => b[1] - a[1])) {
    if (value <= 0) continue;
    const counts = key.endsWith('[ctx]') || key.endsWith('[preempted]');
    if (!key.includes('[')) total += value;
    // Milliseconds of CPU × 1,000 ÷ deliveries: µs per delivery; switches × 1,000 ÷ deliveries: per 1,000.
    const figure = (value * 1000) / delivered;
    console.log(`  ${key.padEnd(36)} ${figure.toFixed(2)}${counts ? '' : ' µs'}`);
  }
  console.log(`  ${'total'.padEnd(36)} ${((total * 1000) / delivered).toFixed(2)} µs`);
} finally {
  await server.stop();
  gen.close();
  rmSync(scratch.dir, { recursive: true, force: true });
}
