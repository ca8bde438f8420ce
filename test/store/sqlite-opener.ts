/**
 * A separate process for `sqlite-open.test.ts`: it prints `ready`, reads a
 * start time (`Date.now()` ms) from stdin, then opens one new file per round,
 * `<dir>/round-<k>.sqlite`, at exactly start + k × spacing, so several such
 * processes open each file at the same moment. It prints one JSON line,
 * `{"failures":[…]}`, and exits 0.
 *
 * Run as `node --import tsx sqlite-opener.ts <dir> <rounds> <spacingMs>`.
 */
import { once } from 'node:events';
import { join } from 'node:path';
import { SqliteFile } from '../../server/store/sqlite-file.ts';

/** How long before each moment the process stops sleeping and spins. */
const SPIN_MS = 15;

const [dir, rounds, spacingMs] = process.argv.slice(2);
if (!dir || !rounds || !spacingMs)
  throw new Error('usage: sqlite-opener.ts <dir> <rounds> <spacingMs>');

process.stdout.write('ready\n');
const [line] = (await once(process.stdin, 'data')) as [Buffer];
const start = Number(line.toString());
const failures: string[] = [];
for (let round = 0; round < Number(rounds); round++) {
  const at = start + round * Number(spacingMs);
  // Sleep until shortly before the moment, then spin to it: a timer can fire
  // a few ms late, and the point is to collide. Spinning the whole gap would
  // keep a core busy for the whole run, in each of the processes.
  const sleepMs = at - SPIN_MS - Date.now();
  if (sleepMs > 0) await new Promise((resolve) => setTimeout(resolve, sleepMs));
  while (Date.now() < at);
  try {
    new SqliteFile(join(dir, `round-${round}.sqlite`)).close();
  } catch (error) {
    failures.push(`round ${round}: ${(error as { code?: string }).code} ${String(error)}`);
  }
}
process.stdout.write(`${JSON.stringify({ failures })}\n`);
process.stdin.destroy();
