/**
 * `npx tsx bench/compare-builds.ts DIR_A DIR_B [DIR…] [--test=T6|T5] [--sessions=3] [--rounds=9] [--workers=1] [--db=disk|tmpfs] [--pin]`
 * (each DIR a checkout of the chat built with `npm run build`, with
 * `node_modules` in place): one of the bench's tests against two builds or
 * more, head to head, each on SQLite on the disk that holds `data/` (where
 * users keep it), or with `--db=tmpfs` in /dev/shm. The report names the
 * file system.
 *
 * A build runs under the Node flags its own start script gives it (its
 * `dist/server/process/node-flags.js`, when it has one), as `npm start`
 * runs it. A DIR may carry options of its own, so one checkout can be
 * compared with itself: `DIR@workers=2` (its WORKERS, over `--workers`),
 * `DIR@node=--flag,--flag` (Node flags in place of its own; `@node=` none),
 * `DIR@env=NAME=VALUE,NAME=VALUE` (settings over the bench's, e.g.
 * `SQLITE_WAIT_MS=0`).
 * - T6, sustained delivery (100 re-polling subscribers, 4 senders waiting
 *   for their acknowledgements): delivered/s and server CPU per delivery.
 * - T5, fan-out: `--clients` polls wait, one send answers them all:
 *   latency p50 and p99 after the send, RSS and JS heap per waiting poll.
 *   Memory is read from each session's first run, in a fresh process as
 *   in `npm run bench` (a process that held the polls once reuses that
 *   memory: its RSS then hardly grows), and latency from the rounds.
 *
 * A session starts a fresh process of every build, warms each up the same
 * way, then runs rounds: each round runs every build once, and who goes
 * first turns with the round. A build's figure against another is the
 * median, over every round of every session, of its figure divided by the
 * other's in the same round: each build against the one before it and
 * against the first.
 *
 * Why: a before/after of one change on a shared machine. `npm run bench`
 * gives T6 against the baseline from 3 rounds, and this machine swung one
 * commit from 0.77× to 1.33× that way. Runs seconds apart, compared within
 * their round, see the same load; and one process stays lucky or unlucky
 * for all its rounds (what V8 compiled, where its memory landed: two runs
 * of 31 rounds each put one build 7% apart), hence several sessions.
 * `--pin` puts every server on core 0 (run this script, and with it the
 * load generator, under `taskset -c 1`): steadier, but a server's own
 * threads (SQLite's) then share its one core.
 *
 * A build that loses, doubles or reorders a message, or leaves a poll
 * unanswered, fails the run: a fast wrong answer is not a figure.
 */
import { existsSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readCli, usageError } from '../scripts/cli.ts';
import { LoadGenerator } from './lib/load.ts';
import { median } from './lib/ratios.ts';
import { dbPlace, describeScratch, makeScratch } from './lib/scratch.ts';
import { chatSpec, type RunningServer, startServer } from './lib/servers.ts';
import { hasForked } from './scenarios/cluster.ts';
import { fanout, sustained } from './scenarios/polls.ts';

const usage = {
  usage: `usage: npx tsx bench/compare-builds.ts DIR_A DIR_B [DIR…] [--test=T6|T5] [--sessions=3]
         [--rounds=9] [--warmups=3] [--messages=2000] [--clients=10000] [--workers=1] [--pin]

One bench test against built checkouts of the chat, head to head. A DIR may
carry its own options: DIR@workers=2 (its WORKERS), DIR@env=NAME=VALUE,… (settings), DIR@node=--flag,--flag
(Node flags in place of those its start script sets; DIR@node= none).

  --test=T6|T5   sustained delivery (default) or fan-out
  --sessions=N   fresh processes of every build, N times (default 3)
  --rounds=N     rounds per session, each running every build once (default 9)
  --warmups=N    full-size runs of each build first (default 3)
  --messages=N   T6: messages per run (default 2000)
  --clients=N    T5: waiting polls per run (default 10000)
  --workers=N    WORKERS for every build: 2 compares cluster mode (default 1)
  --db=disk|tmpfs  the SQLite files on the disk of data/ (default) or in /dev/shm
  --pin          servers on core 0 (run this script under taskset -c 1)
  -h, --help     this help`,
  options: {
    test: { type: 'string' },
    db: { type: 'string' },
    rounds: { type: 'string' },
    sessions: { type: 'string' },
    warmups: { type: 'string' },
    messages: { type: 'string' },
    clients: { type: 'string' },
    workers: { type: 'string' },
    pin: { type: 'boolean' },
  },
  positionals: { max: 12 },
} as const;
const cli = readCli(usage);
/** Each build as given (`DIR[@workers=N][@node=FLAGS]`): its key in the results. */
const dirs = cli.positionals;
if (dirs.length < 2) usageError(usage, 'give two built checkouts or more');
if (new Set(dirs).size < dirs.length) usageError(usage, 'a build is given twice');
const testName = cli.values.test ?? 'T6';
if (testName !== 'T6' && testName !== 'T5') usageError(usage, `no test "${testName}"`);
const test = testName as 'T6' | 'T5';
const rounds = cli.integer('rounds', 9, { min: 1 });
const sessions = cli.integer('sessions', 3, { min: 1 });
// T5 needs one at least: its memory is read from the first.
const warmups = cli.integer('warmups', 3, { min: testName === 'T5' ? 1 : 0 });
const t6 = { subscribers: 100, senders: 4, messages: cli.integer('messages', 2_000, { min: 1 }) };
const clients = cli.integer('clients', 10_000, { min: 1 });
const workers = cli.integer('workers', 1, { min: 1 });

interface Build {
  dir: string;
  workers: number;
  /** Node flags the build's own start script sets, or those `@node=` gives. */
  nodeFlags: string[];
  /** Settings over the bench's own (`@env=`). */
  env: Record<string, string>;
}

/** `DIR[@workers=N][@env=A=1,B=2][@node=--a,--b]` → the build to start. */
async function readBuild(given: string): Promise<Build> {
  const [path = '', ...options] = given.split(/@(?=workers=|node=|env=)/);
  const build: Build = {
    dir: resolve(path),
    workers,
    nodeFlags: await ownNodeFlags(resolve(path)),
    env: {},
  };
  for (const option of options) {
    const [key, value = ''] = option.split(/=(.*)/s);
    if (key === 'workers') {
      if (!/^[1-9]\d*$/.test(value)) usageError(usage, `${given}: workers must be 1 or more`);
      build.workers = Number(value);
    } else if (key === 'env') {
      for (const pair of value.split(',')) {
        const [name = '', setting] = pair.split(/=(.*)/s);
        if (!/^[A-Z][A-Z0-9_]*$/.test(name) || setting === undefined) {
          usageError(usage, `${given}: env takes NAME=VALUE pairs, comma-separated`);
        }
        build.env[name] = setting;
      }
    } else build.nodeFlags = value === '' ? [] : value.split(',');
  }
  return build;
}

/** The flags a build's start script runs Node with (none before it had any). */
async function ownNodeFlags(dir: string): Promise<string[]> {
  const file = join(dir, 'dist/server/process/node-flags.js');
  if (!existsSync(file)) return [];
  const { nodeFlags } = (await import(pathToFileURL(file).href)) as { nodeFlags: string[] };
  return [...nodeFlags];
}
const builds = new Map<string, Build>();
for (const given of dirs) builds.set(given, await readBuild(given));

/** One run's figures by name, and what a ratio of each means. */
type Figures = Record<string, number>;
const FIGURES: Record<
  'T6' | 'T5',
  Array<{ name: string; unit: string; higherIsBetter: boolean }>
> = {
  T6: [
    { name: 'delivered', unit: 'msg/s', higherIsBetter: true },
    { name: 'cpu', unit: 'µs server CPU/delivery', higherIsBetter: false },
    { name: 'main', unit: 'µs main-thread CPU/delivery', higherIsBetter: false },
    // What a delivery costs is what a request costs over the messages an
    // answer carries: a build that acknowledges later packs fewer in each.
    { name: 'request', unit: 'µs server CPU/request', higherIsBetter: false },
    { name: 'batch', unit: 'messages/answer', higherIsBetter: true },
  ],
  T5: [
    { name: 'p50', unit: 'ms p50', higherIsBetter: false },
    { name: 'p99', unit: 'ms p99', higherIsBetter: false },
    { name: 'rss', unit: 'KB RSS/poll', higherIsBetter: false },
    { name: 'heap', unit: 'KB heap/poll', higherIsBetter: false },
  ],
};

async function runOnce(server: RunningServer): Promise<Figures> {
  if (test === 'T6') {
    const row = await sustained(server, gen, t6);
    if (row.lost + row.doubled + row.outOfOrder > 0 || row.delivered !== row.expected) {
      throw new Error(
        `${server.spec.label}: delivered ${row.delivered}/${row.expected}, lost ${row.lost}, doubled ${row.doubled}, out of order ${row.outOfOrder}, sends not answered 200: ${row.sendErrors ?? 0}${(row.incidents ?? []).map((line) => `\n  ${line}`).join('')}`,
      );
    }
    return {
      delivered: row.deliveredPerSec,
      cpu: row.serverCpuUsPerDelivery ?? Number.NaN,
      main: row.mainThreadCpuUsPerDelivery ?? Number.NaN,
      request: row.serverCpuUsPerRequest ?? Number.NaN,
      batch: row.messagesPerAnswer ?? Number.NaN,
    };
  }
  const row = await fanout(server, gen, clients);
  if (row.answered !== clients) {
    throw new Error(`${server.spec.label}: ${row.answered}/${clients} polls answered`);
  }
  return {
    p50: row.latency.p50,
    p99: row.latency.p99,
    rss: row.bytesPerClient / 1024,
    heap: row.heapBytesPerClient / 1024,
  };
}

const place = (() => {
  try {
    return dbPlace(cli.values.db);
  } catch (error) {
    return usageError(usage, (error as Error).message);
  }
})();
const where = makeScratch(place, 'chat-compare');
const scratch = where.dir;
process.stdout.write(`${describeScratch(where)}\n`);
const gen = new LoadGenerator();
const rows = new Map<string, Figures[]>(dirs.map((dir) => [dir, []]));
/** T5: each session's first run of each build, for its memory. */
const firstRuns = new Map<string, Figures[]>(dirs.map((dir) => [dir, []]));
const FIRST_RUN_ONLY = new Set(['rss', 'heap']);
try {
  for (let session = 1; session <= sessions; session++) await runSession(session);
  report();
} finally {
  gen.close();
  rmSync(scratch, { recursive: true, force: true });
}

/** Fresh processes of every build, warmed up, then the rounds. */
async function runSession(session: number): Promise<void> {
  const servers: RunningServer[] = [];
  try {
    for (const [i, given] of dirs.entries()) {
      const build = builds.get(given)!;
      const spec = chatSpec(given, given, {
        databaseUrl: `sqlite:${join(scratch, `${session}-${i}.sqlite`)}`,
        workers: build.workers,
      });
      // Each build runs its own entry point with its own bench routes, under its own flags.
      spec.argv = spec.argv.map((arg) =>
        arg.startsWith('./bench/') || arg.startsWith('dist/') ? join(build.dir, arg) : arg,
      );
      spec.argv.splice(1, 0, ...build.nodeFlags);
      spec.env = { ...spec.env, ...build.env };
      if (cli.values.pin) spec.argv = ['taskset', '-c', '0', ...spec.argv];
      const server = await startServer(spec);
      servers.push(server);
      if (build.workers > 1 && !(await hasForked(server, build.workers))) {
        throw new Error(`${given}: no cluster workers at WORKERS=${build.workers}`);
      }
      console.log(
        `${given}: WORKERS=${build.workers}, node ${build.nodeFlags.join(' ') || '(no flags)'}${Object.entries(
          build.env,
        )
          .map(([name, value]) => `, ${name}=${value}`)
          .join('')}`,
      );
    }
    for (const server of servers) {
      for (let i = 0; i < warmups; i++) {
        const figures = await runOnce(server);
        if (i === 0) firstRuns.get(server.spec.name)!.push(figures);
      }
    }
    for (let r = 0; r < rounds; r++) {
      const shift = r % servers.length;
      for (const server of [...servers.slice(shift), ...servers.slice(0, shift)]) {
        const figures = await runOnce(server);
        rows.get(server.spec.name)!.push(figures);
        const text = FIGURES[test]
          .map(({ name, unit }) => `${round(figures[name]!)} ${unit}`)
          .join(', ');
        console.log(
          `session ${session} round ${r + 1} ${server.spec.name}: ${text}, load ${loadavg()[0]!.toFixed(2)}`,
        );
      }
    }
  } finally {
    for (const server of servers) await server.stop();
  }
}

function report(): void {
  // Within a round, one build's figure over another's; the median of that over every round.
  const source = (name: string) => (test === 'T5' && FIRST_RUN_ONLY.has(name) ? firstRuns : rows);
  const against = (dir: string, other: string, name: string) => {
    const theirs = source(name).get(other)!;
    return median(
      source(name)
        .get(dir)!
        .map((row, i) => row[name]! / theirs[i]![name]!),
    );
  };
  const counts = new Set([...builds.values()].map((build) => build.workers));
  const mode = counts.size > 1 ? ', WORKERS as given' : workers > 1 ? `, WORKERS=${workers}` : '';
  console.log(
    `\n${test}${mode}, ${describeScratch(where)}: ${rounds * sessions} rounds over ${sessions} sessions; medians`,
  );
  for (const { name, unit, higherIsBetter } of FIGURES[test]) {
    if (
      dirs.every((dir) =>
        source(name)
          .get(dir)!
          .every((row) => Number.isNaN(row[name])),
      )
    ) {
      // The JS heap comes from one process's own GC (`/bench/gc`): a cluster has several.
      console.log(`${unit}: not measured${mode}`);
      continue;
    }
    const first = source(name) === firstRuns ? ', each session’s first run' : '';
    console.log(`${unit} (${higherIsBetter ? 'higher' : 'lower'} is better${first}):`);
    for (const [i, dir] of dirs.entries()) {
      const value = median(
        source(name)
          .get(dir)!
          .map((row) => row[name]!),
      );
      const ratios =
        i === 0
          ? ''
          : `; ${against(dir, dirs[i - 1]!, name).toFixed(3)}× the build before, ${against(dir, dirs[0]!, name).toFixed(3)}× the first`;
      console.log(`  ${dir}: ${round(value)}${ratios}`);
    }
  }
}

function round(value: number): number {
  return Math.abs(value) >= 100 ? Math.round(value) : Math.round(value * 100) / 100;
}
