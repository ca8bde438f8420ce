/**
 * `npm run bench:db [-- --quick]`: the chat on the MySQL store against raw
 * mysql2, at 100 concurrent connections, on the MariaDB of `MYSQL_URL`; and
 * the same `POST /send` and `GET /history` on SQLite (a file in a temporary
 * folder) and, when `MONGODB_URL` is set, on that MongoDB-protocol server,
 * each row labelled with the server it ran on (FerretDB says so: it is not
 * MongoDB).
 *
 * - write: `POST /send` (autocannon, 100 keep-alive connections) against a
 *   raw loop of single-row INSERTs into an auto-increment table (100 loops,
 *   one connection each): the ceiling, and the original article's "write" test.
 * - read: `GET /history` (a page of 50) against the raw SELECT of the same page.
 *
 * It prints requests/s, p50/p99 latency (ms) and the chat/raw ratio (aim:
 * at least 0.7), and the same routes on the memory store: the HTTP ceiling
 * of the machine, to tell the store's cost from the HTTP layer's. The server is the built one (`dist/server/main.js`, started
 * as a child process on a free port). Everything runs against a throwaway
 * database, dropped at the end. A figure script, not a test: timings here
 * vary with the machine's load.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MongoClient } from 'mongodb';
import { createConnection, createPool, type Pool } from 'mysql2/promise';
import { readCli } from '../scripts/cli.ts';
import { freePort } from '../test/helpers/free-port.ts';
import { withDatabase as withMongoDatabase } from '../test/store/mongodb/fixture.ts';
import { buildChat } from './lib/build.ts';

const { values } = readCli({
  usage: `usage: npm run bench:db [-- --quick]

Builds the server (tsc), then measures the chat on the MySQL store of
MYSQL_URL against raw mysql2, and on the memory store; then /send and
/history by store: SQLite, MySQL and, with MONGODB_URL, MongoDB (FerretDB's
back end is taken from FERRETDB_BACKEND, SQLite when unset, as
scripts/services.sh runs it).

  --quick        2 s per measure instead of 10
  -h, --help     this help`,
  options: { quick: { type: 'boolean' } },
});
// After the flags: `--help` and a bad flag answer at once, before any build.
buildChat('server');

const CONNECTIONS = 100;
const quick = values.quick === true;
const seconds = quick ? 2 : 10;
const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface Figures {
  requestsPerSec: number;
  p50: number;
  p99: number;
  errors: number;
}

async function main(): Promise<void> {
  const serverUrl = process.env.MYSQL_URL;
  if (!serverUrl) throw new Error('Set MYSQL_URL, e.g. mysql://root@127.0.0.1:3306/test');
  const database = `chat_bench_${Math.random().toString(36).slice(2, 10)}`;
  const databaseUrl = withDatabase(serverUrl, database);
  const admin = await createConnection(serverUrl);
  await admin.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  const servers: ChildProcess[] = [];
  const raw = createPool({
    uri: databaseUrl,
    connectionLimit: CONNECTIONS,
    charset: 'UTF8MB4_BIN',
  });
  try {
    const mysql = await startServer(databaseUrl);
    const memory = await startServer('memory:');
    servers.push(mysql.child, memory.child);
    await raw.query(`CREATE TABLE raw_messages (
      id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, room VARCHAR(32) NOT NULL,
      nickname VARCHAR(32) NOT NULL, text VARCHAR(2000) NOT NULL, time DATETIME(3) NOT NULL
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);

    console.log(`bench:db: ${CONNECTIONS} connections, ${seconds} s each, ${databaseUrl}\n`);
    const body = JSON.stringify({ room: 'bench', nickname: 'bench', text: 'hello from the bench' });
    const rawWrite = await loop(raw, () => [
      'INSERT INTO raw_messages (room, nickname, text, time) VALUES (?, ?, ?, NOW(3))',
      ['bench', 'bench', 'hello from the bench'],
    ]);
    const send = (url: string) =>
      http({
        url: `${url}/send`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
    const chatWrite = await send(mysql.url);
    const memoryWrite = await send(memory.url);

    // Read a page from the middle of the room the write test filled.
    const [[{ last }]] = (await raw.query(
      "SELECT last_id AS last FROM chat_rooms WHERE room = 'bench'",
    )) as unknown as [[{ last: number }]];
    const before = Math.max(51, Math.floor(last / 2));
    const rawRead = await loop(raw, () => [
      `SELECT id, room, nickname, text, time FROM chat_messages
       WHERE room = ? AND id < ? ORDER BY id DESC LIMIT ?`,
      ['bench', before, '50'],
    ]);
    const history = (url: string) =>
      http({ url: `${url}/history?room=bench&before=${before}&limit=50` });
    const chatRead = await history(mysql.url);
    const memoryRead = await history(memory.url);

    report(
      'write',
      ['POST /send, mysql store', chatWrite],
      ['raw INSERT loop', rawWrite],
      ['POST /send, memory store', memoryWrite],
    );
    report(
      'read',
      ['GET /history, mysql store', chatRead],
      ['raw SELECT of the page', rawRead],
      ['GET /history, memory store', memoryRead],
    );

    // By store: the same two routes on SQLite and MongoDB, beside these MySQL rows.
    const [[{ version }]] = (await raw.query('SELECT VERSION() AS version')) as unknown as [
      [{ version: string }],
    ];
    const rows: [string, Figures, Figures][] = [
      [`mysql: ${mariadbLabel(version)}`, chatWrite, chatRead],
    ];
    const sqliteDir = mkdtempSync(join(tmpdir(), 'chat-bench-db-'));
    cleanups.push(() => rmSync(sqliteDir, { recursive: true, force: true }));
    const sqlite = await startServer(`sqlite:${join(sqliteDir, 'chat.sqlite')}`);
    servers.push(sqlite.child);
    rows.unshift(['sqlite: a file on this disk', ...(await writeThenRead(sqlite.url, send))]);
    const mongoUrl = process.env.MONGODB_URL?.trim();
    if (mongoUrl) {
      const name = `chat_bench_${Math.random().toString(36).slice(2, 10)}`;
      const client = new MongoClient(mongoUrl);
      cleanups.push(async () => {
        await client.db(name).dropDatabase();
        await client.close();
      });
      const label = await mongoLabel(client);
      const mongo = await startServer(withMongoDatabase(mongoUrl, name));
      servers.push(mongo.child);
      rows.push([`mongodb: ${label}`, ...(await writeThenRead(mongo.url, send))]);
    } else {
      console.log('(MONGODB_URL is not set: no MongoDB rows)\n');
    }
    rows.push(['memory (the HTTP ceiling)', memoryWrite, memoryRead]);
    reportByStore(rows);
  } finally {
    for (const server of servers) {
      server.kill('SIGTERM');
      if (server.exitCode === null) await once(server, 'exit');
    }
    await raw.end();
    await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin.end();
    for (const cleanup of cleanups) await cleanup();
  }
}

const cleanups: Array<() => void | Promise<void>> = [];

/** `POST /send` for the bench's time, then `GET /history` of a page from the middle of what it wrote. */
async function writeThenRead(
  url: string,
  send: (url: string) => Promise<Figures>,
): Promise<[Figures, Figures]> {
  const write = await send(url);
  const latest = (await (await fetch(`${url}/history?room=bench&limit=1`)).json()) as {
    messages: { id: number }[];
  };
  const last = latest.messages[0]?.id ?? 0;
  const before = Math.max(51, Math.floor(last / 2));
  const read = await http({ url: `${url}/history?room=bench&before=${before}&limit=50` });
  return [write, read];
}

function mariadbLabel(version: string): string {
  return /mariadb/i.test(version)
    ? `MariaDB ${version.replace(/-MariaDB.*$/i, '')}`
    : `MySQL ${version}`;
}

/** The server behind MONGODB_URL, as it says: FerretDB names itself in `buildInfo`. */
async function mongoLabel(client: MongoClient): Promise<string> {
  const info = await client.db('admin').command({ buildInfo: 1 });
  if (typeof info.ferretdbVersion === 'string') {
    const backend = process.env.FERRETDB_BACKEND?.trim() || 'SQLite';
    return `FerretDB ${info.ferretdbVersion.replace(/^v/, '')} (${backend} back end), not MongoDB`;
  }
  return `MongoDB ${info.version}`;
}

/** One row per store: what `POST /send` and `GET /history` (a page of 50) managed. */
function reportByStore(rows: [string, Figures, Figures][]): void {
  const cell = (f: Figures) =>
    `${f.requestsPerSec.toFixed(0).padStart(7)} req/s (p50 ${f.p50.toFixed(1)} ms, p99 ${f.p99.toFixed(1)} ms${f.errors ? `, ${f.errors} errors` : ''})`;
  console.log('by store (the server each ran on):');
  for (const [name, write, read] of rows) {
    console.log(`  ${name}`);
    console.log(`    POST /send     ${cell(write)}`);
    console.log(`    GET /history   ${cell(read)}`);
  }
  console.log('');
}

/** `CONNECTIONS` loops, each running its statement back to back for `seconds`. */
async function loop(pool: Pool, statement: () => [string, unknown[]]): Promise<Figures> {
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const [sql, params] = statement();
      const start = performance.now();
      try {
        await pool.execute(sql, params as never);
        latencies.push(performance.now() - start);
      } catch {
        errors += 1;
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { requestsPerSec: latencies.length / elapsed, p50: at(0.5), p99: at(0.99), errors };
}

interface HttpOptions {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

interface AutocannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}

async function http(options: HttpOptions): Promise<Figures> {
  // autocannon ships no types; a computed specifier keeps this script free of
  // an ambient declaration (the load benches declare their own).
  const specifier = 'autocannon';
  const { default: autocannon } = (await import(specifier)) as {
    default: (options: object) => Promise<AutocannonResult>;
  };
  const result = await autocannon({ ...options, connections: CONNECTIONS, duration: seconds });
  return {
    requestsPerSec: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

type Named = [name: string, figures: Figures];

/**
 * Prints the chat against raw mysql2, and against the same chat on the memory
 * store: the HTTP ceiling of this machine, which tells how much of a gap is
 * the store's and how much is HTTP's.
 */
function report(
  test: string,
  [chatName, chat]: Named,
  [rawName, raw]: Named,
  [refName, ref]: Named,
) {
  const row = (name: string, f: Figures) =>
    `  ${name.padEnd(28)} ${f.requestsPerSec.toFixed(0).padStart(8)} req/s   p50 ${f.p50
      .toFixed(1)
      .padStart(
        6,
      )} ms   p99 ${f.p99.toFixed(1).padStart(6)} ms${f.errors ? `   errors ${f.errors}` : ''}`;
  const ratio = (a: Figures, b: Figures) => (a.requestsPerSec / b.requestsPerSec).toFixed(2);
  console.log(`${test}:`);
  console.log(row(chatName, chat));
  console.log(row(rawName, raw));
  console.log(row(refName, ref));
  console.log(`  ratio chat/raw ${ratio(chat, raw)} (aim ≥ 0.70)`);
  console.log(
    `  ratio mysql store/memory store ${ratio(chat, ref)} (1.00: the store costs nothing over HTTP)\n`,
  );
}

async function startServer(databaseUrl: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/server/main.js'], {
    cwd: ROOT,
    // Its log is shown only if it fails to start: sends still queued when the bench
    // stops it are answered 503 at shutdown, which is expected, not news.
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      SEND_RATE: '0',
      SEND_KB_PER_HOUR: '0',
      HISTORY_RATE: '0',
      LOG_LEVEL: 'warn',
      SERVE_STATIC: 'false',
    },
  });
  let log = '';
  child.stderr?.on('data', (chunk) => {
    if (log.length < 10_000) log += chunk;
  });
  const url = `http://127.0.0.1:${port}`;
  // Bounded wait for the server to answer /health (it migrates the schema first).
  for (let tries = 0; ; tries++) {
    if (child.exitCode !== null)
      throw new Error(`the server exited with ${child.exitCode}:\n${log}`);
    const ok = await fetch(`${url}/health`).then(
      (res) => res.ok,
      () => false,
    );
    if (ok) return { url, child };
    if (tries > 100) {
      child.kill('SIGKILL');
      throw new Error(`the server did not answer /health within 10 s:\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.href;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
