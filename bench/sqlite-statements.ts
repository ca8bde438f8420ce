/**
 * `npx tsx bench/sqlite-statements.ts [--rows=50] [--calls=20000] [--rounds=5] [--db=disk|tmpfs]`:
 * each of the SQLite store's statements (`SQL`, server/store/sqlite-file.ts)
 * run again and again on one connection, as its threads run them, against
 * the same statement with a plain `?` wherever `SQL` writes `+?`. Prints
 * µs per call, median over the rounds, and the ratio.
 *
 * Why: SQLite compiles a statement again at its next run when a value its
 * planner read has been bound anew, and better-sqlite3 unbinds after every
 * run; `SQL` keeps bound values out of the planner's sight (its comment
 * says how). A call that costs as much as preparing the statement afresh
 * (the third column) is being compiled every time.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { readCli } from '../scripts/cli.ts';
import { SQL, SqliteFile } from '../server/store/sqlite-file.ts';
import { median } from './lib/ratios.ts';
import { dbPlace, describeScratch, makeScratch } from './lib/scratch.ts';

const cli = readCli({
  usage: `usage: npx tsx bench/sqlite-statements.ts [--rows=50] [--calls=20000] [--rounds=5] [--db=disk|tmpfs]

Times each SQLite statement of the store as written (server/store/sqlite-file.ts, SQL)
against the same with a plain ? for each +?, and a fresh prepare of it, in µs per call.

  --rows=N         messages in the room first (default 50)
  --calls=N        calls of each statement per round (default 20000)
  --rounds=N       rounds, each statement in turn (default 5)
  --db=disk|tmpfs  the file on the disk of data/ (default) or in /dev/shm
  -h, --help       this help`,
  options: {
    rows: { type: 'string' },
    calls: { type: 'string' },
    rounds: { type: 'string' },
    db: { type: 'string' },
  },
});
const rows = cli.integer('rows', 50, { min: 10 });
const calls = cli.integer('calls', 20_000, { min: 1 });
const rounds = cli.integer('rounds', 5, { min: 1 });
const scratch = makeScratch(dbPlace(cli.values.db), 'sqlite-statements');
const file = join(scratch.dir, 'chat.sqlite');

// The store's own file: its schema, and rows written by its own append.
const store = new SqliteFile(file, { synchronous: 'NORMAL' });
for (let i = 0; i < rows; i++) {
  store.append([{ room: 'lobby', nickname: 'ann', text: `hello ${i}`, key: `k${i}` }], Infinity);
}
store.close();

const db = new Database(file, { readonly: true });
// Later than every row: the prune's scan finds rows to expire (at most its LIMIT).
const later = new Date(Date.now() + 60_000).toISOString();
/** The read statements, with the arguments a poll, a page of history or a prune gives them. */
const reads: Partial<Record<keyof typeof SQL, unknown[]>> = {
  byKey: ['lobby', 'k3'],
  lastId: ['lobby'],
  after: ['lobby', rows - 5, 100],
  before: ['lobby', 20, 10],
  head: ['lobby'],
  oldest: ['lobby'],
  expired: [later, 5],
  pruned: ['lobby'],
};

function perCall(run: () => unknown, n: number): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) run();
  return Number(process.hrtime.bigint() - started) / n / 1000;
}

const results = new Map<string, { written: number[]; plain: number[]; fresh: number[] }>();
try {
  for (let round = 0; round < rounds; round++) {
    for (const [name, args] of Object.entries(reads)) {
      const sql = SQL[name as keyof typeof SQL];
      const written = db.prepare(sql);
      const plain = db.prepare(sql.replaceAll('+?', '?'));
      const result = results.get(name) ?? { written: [], plain: [], fresh: [] };
      results.set(name, result);
      // Warm both, then time them in turn.
      perCall(() => written.all(...args), 1_000);
      perCall(() => plain.all(...args), 1_000);
      result.written.push(perCall(() => written.all(...args), calls));
      result.plain.push(perCall(() => plain.all(...args), calls));
      result.fresh.push(perCall(() => db.prepare(sql).all(...args), Math.ceil(calls / 10)));
    }
  }
  console.log(
    `SQLite ${String((db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v)}, ` +
      `${rows} messages, ${describeScratch(scratch)}: µs per call, median of ${rounds} rounds`,
  );
  console.log(
    `  ${'statement'.padEnd(10)} ${'as written'.padStart(11)} ${'plain ?'.padStart(9)} ${'fresh prepare'.padStart(14)}  written ÷ plain`,
  );
  for (const [name, { written, plain, fresh }] of results) {
    const same = !SQL[name as keyof typeof SQL].includes('+?');
    console.log(
      `  ${name.padEnd(10)} ${median(written).toFixed(2).padStart(11)} ${median(plain).toFixed(2).padStart(9)} ${median(fresh).toFixed(2).padStart(14)}  ${same ? '(no +?)' : `${(median(written) / median(plain)).toFixed(3)}×`}`,
    );
  }
} finally {
  db.close();
  rmSync(scratch.dir, { recursive: true, force: true });
}
