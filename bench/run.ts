/**
 * `npm run bench [-- --quick] [-- --only=T1,T6]` (`-- --help` for the flags):
 * builds the chat (`npm run build`), then runs the original articles'
 * benchmarks against the built chat and its baselines (the in-memory
 * `node:http` cursor server, bare Express, the naive 2011 chat), in one run.
 *
 * The figures held against a goal come from rounds run back to back: T1, the
 * chat's `/time` against bare Express (median of 3 alternating rounds); T6,
 * sustained delivery with each sender waiting for its acknowledgement, the
 * chat against the in-memory baseline (msg/s and server CPU per delivery,
 * each also as a ratio to the baseline).
 *
 * Output: a table on stdout, then the ratios, `bench/results/<date>.json`, and
 * `bench/results/<date>.html`, one self-contained report with charts.
 * Exits 1 only on a real failure: a server that does not start, a lost,
 * doubled or reordered message on the chat, a fan-out poll left unanswered
 * by the chat. Slow figures are reported, never failed: the machine may be
 * busy.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { readCli } from '../scripts/cli.ts';
import { hasAb } from './lib/ab.ts';
import { buildChat } from './lib/build.ts';
import { emptyResults, FULL, progress, QUICK, type Results, type Sizes } from './lib/context.ts';
import { LoadGenerator } from './lib/load.ts';
import { openMysqlDatabase } from './lib/mysql.ts';
import { renderRatios } from './lib/ratios.ts';
import { dbPlace, describeScratch, makeScratch } from './lib/scratch.ts';
import {
  bareExpressSpec,
  bareHttpSpec,
  chatSpec,
  naiveSpec,
  type RunningServer,
  type ServerSpec,
  startServer,
} from './lib/servers.ts';
import { renderHtml } from './report/html.ts';
import { renderTable } from './report/table.ts';
import { clusterFanout, cpuBound } from './scenarios/cluster.ts';
import { fanouts, oneSecondWait, sustainedDelivery, sustainedRounds } from './scenarios/polls.ts';
import { historyRoute, sendRoute, timeRounds, timeRoute } from './scenarios/rates.ts';

const TESTS = ['T1', 'T2', 'T3', 'T4', 'T5', 'T6', 'T7', 'CLUSTER'];
const cli = {
  usage: `usage: npm run bench [-- --quick] [-- --only=T1,T6]

Builds the chat (npm run build), then runs the benchmarks and writes
bench/results/<date>.json and .html. MYSQL_URL adds the MySQL rows.

  --quick        small sizes and short runs (what CI runs)
  --only=LIST    only these tests, comma separated: ${TESTS.join(', ')}
  --db=disk|tmpfs  the chat's SQLite files on the disk of data/ (default: the
                 headline figures) or in /dev/shm; T3 and T6 run once more on
                 the other one, labelled
  -h, --help     this help`,
  options: { quick: { type: 'boolean' }, only: { type: 'string' }, db: { type: 'string' } },
} as const;
const { values } = readCli(cli);
const quick = values.quick === true;
const only = values.only?.toUpperCase().split(',');
const unknownTest = only?.find((test) => !TESTS.includes(test));
if (unknownTest !== undefined) {
  process.stderr.write(`--only: no test "${unknownTest}" (${TESTS.join(', ')})\n`);
  process.exit(2);
}
const wants = (test: string) => !only || only.includes(test);
// After the flags: `--help` and a bad flag answer at once, before any build.
buildChat();
const sizes: Sizes = quick ? QUICK : FULL;

// The chat's SQLite files live where users keep theirs, on the disk that
// holds data/ (bench/lib/scratch.ts): every acknowledged send waits for its
// fsync there. T3 and T6 run once more on the other place (tmpfs, when the
// headline is the disk), labelled, to show what the disk costs.
const place = dbPlace(values.db);
const headline = makeScratch(place, 'chat-bench');
const other =
  place === 'disk' && existsSync('/dev/shm') ? makeScratch('tmpfs', 'chat-bench') : undefined;
const scratch = headline.dir;
const sqliteUrl = (tag: string) => `sqlite:${join(scratch, `${tag}.sqlite`)}`;

const results = emptyResults(quick);
const gen = new LoadGenerator();

async function withServers(
  specs: ServerSpec[],
  body: (servers: RunningServer[]) => Promise<void>,
): Promise<void> {
  const servers: RunningServer[] = [];
  try {
    for (const spec of specs) {
      let server: RunningServer;
      try {
        server = await startServer(spec);
      } catch (error) {
        results.failures.push(`${spec.label} did not start: ${(error as Error).message}`);
        progress(`FAIL ${spec.label} did not start: ${(error as Error).message}`);
        return;
      }
      servers.push(server);
      results.machine.openFileLimit.server = server.fileLimit;
      progress(
        `started ${spec.label} (pid ${server.pid}, port ${server.port}, open-file limit ${server.fileLimit})`,
      );
    }
    await body(servers);
  } finally {
    for (const server of servers) await server.stop();
  }
}

const withServer = (spec: ServerSpec, body: (server: RunningServer) => Promise<void>) =>
  withServers([spec], ([server]) => body(server!));

/**
 * Every test that applies to one single-process server. `inRounds` leaves out
 * the tests that server runs in back-to-back rounds instead (`rounds`).
 */
async function suite(
  spec: ServerSpec,
  store: string | undefined,
  inRounds: { t1?: boolean; t6?: boolean } = {},
): Promise<void> {
  await withServer(spec, async (server) => {
    if (wants('T1') && store !== 'mysql' && !inRounds.t1) await timeRoute(server, sizes, results);
    if (wants('T2') && spec.name !== 'naive')
      await historyRoute(server, store ?? 'memory', sizes, results);
    if (wants('T3')) await sendRoute(server, store ?? 'memory', sizes, results);
    if (store === 'mysql') return;
    if (wants('T4')) await oneSecondWait(server, gen, sizes, results);
    if (wants('T5')) await fanouts(server, gen, sizes, results);
    if (wants('T6') && !inRounds.t6) await sustainedDelivery(server, gen, sizes, results);
  });
}

/**
 * The figures held against a goal, each from rounds that run two servers back
 * to back (both up throughout, fresh rooms per run): T1, the chat against
 * bare Express; T6, the chat against the in-memory baseline.
 */
async function rounds(): Promise<void> {
  const chat = chatSpec('chat', 'chat (SQLite)', { databaseUrl: sqliteUrl('chat-rounds') });
  if (wants('T1')) {
    await withServers([chat, bareExpressSpec], ([c, e]) => timeRounds(c!, e!, sizes, results));
  }
  if (wants('T6')) {
    await withServers([chat, bareHttpSpec], ([c, b]) =>
      sustainedRounds(c!, b!, gen, sizes, results),
    );
  }
}

/** T2/T3 on MySQL, in a database of its own, when `MYSQL_URL` is set. */
async function mysqlSuite(serverUrl: string | undefined): Promise<void> {
  if (!serverUrl) {
    results.notes.push('MySQL: set MYSQL_URL to run T2/T3 against MySQL too.');
    return;
  }
  let mysql: Awaited<ReturnType<typeof openMysqlDatabase>>;
  try {
    mysql = await openMysqlDatabase(serverUrl);
  } catch (error) {
    results.failures.push(`MySQL at MYSQL_URL: ${(error as Error).message}`);
    progress(`FAIL MySQL at MYSQL_URL: ${(error as Error).message}`);
    return;
  }
  try {
    await suite(chatSpec('chat-mysql', 'chat (MySQL)', { databaseUrl: mysql.url }), 'mysql');
  } finally {
    await mysql.drop();
  }
}

function check(results: Results): void {
  // Every run counts: the rounds, and the summary rows of servers outside them.
  const inRounds = new Set((results.t6Rounds ?? []).map((row) => row.server));
  const t6Runs = [
    ...(results.t6Rounds ?? []),
    ...results.t6.filter((row) => !inRounds.has(row.server)),
  ];
  for (const row of t6Runs) {
    if (row.server.startsWith('chat') && (row.lost > 0 || row.doubled > 0 || row.outOfOrder > 0)) {
      results.failures.push(
        `T6${row.round === undefined ? '' : ` round ${row.round}`}: ${row.label} lost ${row.lost}, doubled ${row.doubled}, reordered ${row.outOfOrder} messages${(row.incidents ?? []).map((line) => `; ${line}`).join('')}`,
      );
    }
  }
  for (const row of [
    ...results.t5,
    ...results.cluster.flatMap((c) => (c.fanout ? [c.fanout] : [])),
  ]) {
    if (row.server.startsWith('chat') && row.answered < row.clients) {
      results.failures.push(
        `T5: the chat answered ${row.answered} of ${row.clients} waiting polls`,
      );
    }
  }
  for (const row of results.cluster) {
    const flow = row.sustained;
    if (flow && (flow.lost > 0 || flow.doubled > 0 || flow.outOfOrder > 0)) {
      results.failures.push(
        `cluster WORKERS=${row.workers}: lost ${flow.lost}, doubled ${flow.doubled}, reordered ${flow.outOfOrder}`,
      );
    }
  }
}

/** The commit being measured, `-dirty` when the tree has changes; `unknown` outside a git checkout. */
function commitOf(): string {
  try {
    return execFileSync('git', ['describe', '--always', '--dirty', '--abbrev=12'], {
      cwd: import.meta.dirname,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  Object.assign(results.machine, {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? '',
    memoryGb: Math.round(totalmem() / 2 ** 30),
    loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
    rateTool: hasAb ? 'ab (ApacheBench)' : 'autocannon',
    commit: commitOf(),
  });
  progress(
    `bench ${quick ? '(quick)' : '(full)'} on ${results.machine.cpus} × ${results.machine.cpuModel}, load ${results.machine.loadAverage.join(' ')}`,
  );

  await suite(chatSpec('chat', 'chat (SQLite)', { databaseUrl: sqliteUrl('chat') }), 'sqlite', {
    t1: true,
    t6: true,
  });
  results.notes.push(
    `Headline figures: ${describeScratch(headline)}.${other ? ` The "chat (SQLite on tmpfs)" rows of T3 and T6: ${describeScratch(other)}.` : ''}`,
  );
  if (other) {
    const databaseUrl = `sqlite:${join(other.dir, 'chat.sqlite')}`;
    const spec = chatSpec('chat-tmpfs', 'chat (SQLite on tmpfs)', { databaseUrl });
    if (wants('T3')) {
      await withServer(spec, (server) => sendRoute(server, 'sqlite, tmpfs', sizes, results));
    }
    if (wants('T6')) {
      await withServer(spec, (server) => sustainedDelivery(server, gen, sizes, results));
    }
  }
  await mysqlSuite(process.env.MYSQL_URL);
  await suite(bareHttpSpec, undefined, { t6: true });
  await rounds();
  await suite(naiveSpec, undefined);
  if (wants('T7')) await cpuBound(sqliteUrl, gen, sizes, results);
  if (wants('CLUSTER')) await clusterFanout(sqliteUrl, gen, sizes, results);
  results.machine.openFileLimit.generator = gen.fileLimit;

  check(results);
  // A MySQL chat that failed to start because the store is not built yet is a note, not a failure.
  results.failures = results.failures.filter((failure) => {
    const missingStore =
      /chat \(MySQL\) did not start/.test(failure) && /No store for DATABASE_URL/.test(failure);
    if (missingStore)
      results.notes.push('MySQL: this build has no MySQL store yet; T2/T3 on MySQL skipped.');
    return !missingStore;
  });

  const dir = join(import.meta.dirname, 'results');
  mkdirSync(dir, { recursive: true });
  const stamp = results.date.replace(/[:.]/g, '-').slice(0, 19);
  const jsonFile = join(dir, `${stamp}${quick ? '-quick' : ''}.json`);
  const htmlFile = jsonFile.replace(/\.json$/, '.html');
  writeFileSync(jsonFile, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(htmlFile, renderHtml(results));
  process.stdout.write(`\n${renderTable(results)}\n`);
  // The ratios to the baselines, apart from the report's tables (bench/report is restyled elsewhere).
  const ratios = renderRatios(results);
  if (ratios) process.stdout.write(`\n${ratios}\n`);
  progress(`wrote ${jsonFile}`);
  progress(`wrote ${htmlFile}`);
  progress(`done in ${Math.round((Date.now() - started) / 1000)} s`);
  if (results.failures.length > 0) {
    process.stdout.write(`\nFAILED:\n${results.failures.map((f) => `- ${f}`).join('\n')}\n`);
    process.exitCode = 1;
  }
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => {
    gen.close();
    rmSync(scratch, { recursive: true, force: true });
    if (other) rmSync(other.dir, { recursive: true, force: true });
  });
