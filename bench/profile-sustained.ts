/**
 * `npx tsx bench/profile-sustained.ts [chat|bare|both] [--rounds=2] [--warmups=3] [--messages=2000] [--top=25] [--interval=500] [--db=disk|tmpfs] [--build=DIR] [--workers=N]`
 * (after `npm run build`): runs a server under `node --cpu-prof`, drives T6's
 * workload at it (100 subscribers re-polling with their cursor, 4 senders
 * each waiting for its acknowledgement), then reads the profile and prints
 * where the time went, as text fit for a note:
 * - the top self-time entries, by function and source `file:line` (the
 *   chat's `dist/` lines mapped back to its TypeScript);
 * - self time by file or package (`express`, `node:_http_server`, …);
 * - for the chat, the total (inclusive) time of its own functions, which says
 *   what a path costs with everything it calls (the `/send` route, a catch-up).
 *
 * `both` profiles the baseline (the in-memory node:http cursor server) and
 * then the chat, back to back, and adds the difference in µs per HTTP request
 * (poll answers + sends): what the chat spends that the baseline does not.
 *
 * SQLite is on the disk that holds `data/` (where users keep it), or with
 * `--db=tmpfs` in /dev/shm, as in `compare-builds.ts`. `--build=DIR`
 * profiles another built checkout (a commit before a change) with this
 * script.
 *
 * Only the measured rounds count: start-up and the warm-up runs are cut
 * from the samples by their time. Shares are of the busy (non-idle) time. On
 * a shared machine a thread descheduled inside a system call is still sampled
 * there, so `writev` (a response's write, the kernel's loopback delivery
 * included) also holds time spent waiting for a core. Profiling slows the
 * server (about 1.3× at 500 µs): compare figures within one run.
 * Profiles stay in `bench/results/profiles/` for DevTools, with the text
 * beside each (`.top.txt`).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { readCli, usageError } from '../scripts/cli.ts';
import type { SustainedRow } from './lib/context.ts';
import {
  type Breakdown,
  breakdown,
  type CpuProfile,
  type Entry,
  renderBreakdown,
} from './lib/cpu-profile.ts';
import { LoadGenerator } from './lib/load.ts';
import { processTree } from './lib/proc.ts';
import { type DbPlace, dbPlace, describeScratch, makeScratch } from './lib/scratch.ts';
import { bareHttpSpec, chatSpec, type ServerSpec, startServer } from './lib/servers.ts';
import { sustained, sustainedSummary, warmUp } from './scenarios/polls.ts';

const usage = {
  usage: `usage: npx tsx bench/profile-sustained.ts [chat|bare|both] [--rounds=2] [--warmups=3]
         [--messages=2000] [--top=25] [--interval=500]      (after npm run build)

Profiles T6's workload (100 re-polling subscribers, 4 senders) in the server.

  chat|bare|both   which server: the chat, the node:http baseline, or both (default chat)
  --rounds=N       measured rounds (default 2)
  --warmups=N      full-size runs before them (default 3)
  --messages=N     messages per round (default 2000)
  --top=N          self-time entries printed (default 25)
  --interval=µs    V8's sampling interval (default 500)
  --db=disk|tmpfs  the SQLite file on the disk of data/ (default) or in /dev/shm
  --build=DIR      the built checkout to profile (default this one)
  --workers=N      the chat in cluster mode: a profile of the primary and of each worker
  -h, --help       this help`,
  options: {
    rounds: { type: 'string' },
    warmups: { type: 'string' },
    messages: { type: 'string' },
    top: { type: 'string' },
    interval: { type: 'string' },
    db: { type: 'string' },
    build: { type: 'string' },
    workers: { type: 'string' },
  },
  positionals: { max: 1 },
} as const;
const cli = readCli(usage);
const which = cli.positionals[0] ?? 'chat';
if (!['chat', 'bare', 'both'].includes(which)) usageError(usage, `no server "${which}"`);
const rounds = cli.integer('rounds', 2, { min: 1 });
// Full-size runs before the measured ones, so V8 has compiled the hot paths (see `warmUp`).
const warmups = cli.integer('warmups', 3);
const shape = {
  subscribers: 100,
  senders: 4,
  messages: cli.integer('messages', 2_000, { min: 1 }),
};
const top = cli.integer('top', 25, { min: 1 });
const workers = cli.integer('workers', 1, { min: 1 });
if (workers > 1 && which !== 'chat') usageError(usage, '--workers profiles the chat alone');
// V8 samples every 1000 µs by default; finer gives more samples for the same run.
const intervalUs = cli.integer('interval', 500, { min: 1 });

const root = resolve(cli.values.build ?? resolve(import.meta.dirname, '..'));
const dir = join(import.meta.dirname, 'results', 'profiles');
let place: DbPlace;
try {
  place = dbPlace(cli.values.db);
} catch (error) {
  usageError(usage, (error as Error).message);
}
const scratch = makeScratch(place, 'profile-sustained');
const sqliteFile = join(scratch.dir, 'chat.sqlite');

/** The profile's clock: V8's monotonic ticks in µs, which `process.hrtime` also reads on Linux. */
const clock = () => Number(process.hrtime.bigint() / 1000n);

interface Profiled {
  label: string;
  result: Breakdown;
  /** HTTP exchanges in the measured rounds: poll answers with messages, and sends. */
  requests: number;
}

async function profileOne(base: ServerSpec, gen: LoadGenerator): Promise<Profiled> {
  const spec = {
    ...base,
    argv: [
      base.argv[0]!,
      '--cpu-prof',
      `--cpu-prof-dir=${dir}`,
      `--cpu-prof-interval=${intervalUs}`,
      ...base.argv.slice(1),
    ],
  };
  const before = new Set(readdirSync(dir));
  const server = await startServer(spec);
  const rows: SustainedRow[] = [];
  let window: { from: number; to: number };
  let pids = [server.pid];
  try {
    console.log(
      `profiling ${spec.label} (pid ${server.pid}) under T6's workload: ${shape.subscribers} subscribers, ${shape.senders} senders waiting for acks, ${shape.messages} messages × ${rounds} rounds; load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    await warmUp(server, gen, shape, warmups);
    const from = clock();
    for (let r = 1; r <= rounds; r++) {
      const row = await sustained(server, gen, shape);
      rows.push(row);
      console.log(`round ${r}: ${sustainedSummary(row)}`);
    }
    window = { from, to: clock() };
    pids = processTree(server.pid);
  } finally {
    await server.stop();
    for (const suffix of ['', '-wal', '-shm']) rmSync(sqliteFile + suffix, { force: true });
    console.log(describeScratch(scratch));
  }
  const requests = rows.reduce((total, row) => total + (row.answers ?? 0) + row.messages, 0);
  // In cluster mode, one profile per process: the primary first, then each worker.
  const profiled = pids.map((pid) => {
    const label =
      pids.length === 1 ? spec.label : pid === server.pid ? 'the primary' : `worker ${pid}`;
    return {
      label,
      result: readProfile(pid, before, window, `${spec.label}: ${label}`, requests),
      requests,
    };
  });
  return profiled[0]!;
}

/**
 * Reads the profile `pid` wrote, prints its breakdown and keeps it beside the
 * profile. `CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile`: the main
 * thread's is thread 0 (tsx's loader hooks run in a thread of their own and
 * write a profile too).
 */
function readProfile(
  pid: number,
  before: Set<string>,
  window: { from: number; to: number },
  label: string,
  requests = 0,
): Breakdown {
  const written = readdirSync(dir).filter(
    (f) => !before.has(f) && f.endsWith('.cpuprofile') && f.includes(`.${pid}.0.`),
  );
  if (written.length !== 1) {
    throw new Error(`expected one new profile of pid ${pid} in ${dir}, found ${written}`);
  }
  const file = join(dir, written[0]!);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const overlaps = profile.startTime <= window.to && profile.endTime >= window.from;
  if (!overlaps) {
    console.log('note: the profile clock does not match this process’s; every sample is counted');
  }
  const result = breakdown(profile, {
    root,
    window: overlaps ? window : undefined,
    ownCode: (where) => /^(server|protocol)\//.test(where),
  });
  const text = `${label}, ${file}\n${renderBreakdown(result, top, requests || undefined)}`;
  writeFileSync(file.replace(/\.cpuprofile$/, '.top.txt'), `${text}\n`);
  console.log(`\n${text}\n`);
  return result;
}

/** Chat minus baseline, in µs per HTTP request, for entries keyed alike in both. */
function difference(
  title: string,
  pick: (b: Breakdown) => Entry[],
  chat: Profiled,
  baseline: Profiled,
  count: number,
): string[] {
  const perRequest = (p: Profiled) => {
    const map = new Map<string, { entry: Entry; us: number }>();
    for (const entry of pick(p.result)) {
      if (entry.name === '(idle)') continue;
      map.set(`${entry.name} ${entry.where}`, { entry, us: entry.micros / p.requests });
    }
    return map;
  };
  const c = perRequest(chat);
  const b = perRequest(baseline);
  const rows = [...new Set([...c.keys(), ...b.keys()])].map((key) => {
    const entry = (c.get(key) ?? b.get(key))!.entry;
    const chatUs = c.get(key)?.us ?? 0;
    const baseUs = b.get(key)?.us ?? 0;
    return { entry, chatUs, baseUs, diff: chatUs - baseUs };
  });
  rows.sort((x, y) => Math.abs(y.diff) - Math.abs(x.diff));
  const f = (us: number) => us.toFixed(2).padStart(7);
  return [
    title,
    '    chat  baseline  chat − baseline (µs per request)',
    ...rows
      .slice(0, count)
      .map(
        (r) =>
          `${f(r.chatUs)}  ${f(r.baseUs)}  ${f(r.diff)}  ${r.entry.name}${r.entry.where ? `  ${r.entry.where}` : ''}`,
      ),
    '',
  ];
}

mkdirSync(dir, { recursive: true });
const gen = new LoadGenerator();
const chatSpecHere = chatSpec('chat', `chat (${root}, SQLite on ${place}, WORKERS=${workers})`, {
  databaseUrl: `sqlite:${sqliteFile}`,
  workers,
});
// The build's own entry point and bench routes, as compare-builds.ts runs them.
chatSpecHere.argv = chatSpecHere.argv.map((arg) =>
  arg.startsWith('./bench/') || arg.startsWith('dist/') ? join(root, arg) : arg,
);
try {
  if (which !== 'both') {
    await profileOne(which === 'bare' ? bareHttpSpec : chatSpecHere, gen);
  } else {
    const baseline = await profileOne(bareHttpSpec, gen);
    const chat = await profileOne(chatSpecHere, gen);
    const busy = (p: Profiled) => (p.result.windowUs - p.result.idleUs) / p.requests;
    console.log(
      [
        `Busy time per HTTP request: chat ${busy(chat).toFixed(1)} µs, baseline ${busy(baseline).toFixed(1)} µs (${chat.requests} and ${baseline.requests} requests).`,
        '',
        ...difference(
          'By file or package, largest differences first:',
          (b) => b.selfByFile,
          chat,
          baseline,
          20,
        ),
        ...difference(
          `By function (self time), the ${top} largest differences:`,
          (b) => b.selfByFunction,
          chat,
          baseline,
          top,
        ),
      ].join('\n'),
    );
  }
} finally {
  gen.close();
  rmSync(scratch.dir, { recursive: true, force: true });
}
