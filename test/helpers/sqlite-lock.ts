/**
 * Another process holding a SQLite file's write lock, as a second server
 * process or an operator's `sqlite3` shell in the middle of a transaction
 * would: it opens the file, runs `BEGIN IMMEDIATE`, says so, and holds the
 * lock until `release()`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

const HOLDER = `
import Database from 'better-sqlite3';
const db = new Database(process.argv[1]);
db.exec('BEGIN IMMEDIATE');
process.stdout.write('locked\\n');
process.stdin.resume();
process.stdin.on('end', () => {
  db.exec('ROLLBACK');
  db.close();
  process.exit(0);
});
`;

export interface HeldLock {
  /** Ends the transaction; resolves once the holder has exited. */
  release(): Promise<void>;
}

/** Resolves once another process holds the write lock of `file`. */
export async function holdWriteLock(file: string): Promise<HeldLock> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', HOLDER, file], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await Promise.race([once(lines, 'line'), exited])) as unknown[];
  if (line !== 'locked') throw new Error('the lock holder exited before it held the lock');
  return {
    async release() {
      child.stdin!.end();
      await exited;
    },
  };
}
