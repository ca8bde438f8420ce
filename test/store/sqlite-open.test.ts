/**
 * Several processes opening a new SQLite file at the same moment, as the
 * workers of a cluster do on a first start: each must open it, whoever
 * switches it to WAL first. (SQLite answers one of them `SQLITE_BUSY` at
 * once there, without waiting out `busy_timeout`; `sqlite-file.ts` retries.)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

const OPENER = new URL('./sqlite-opener.ts', import.meta.url).pathname;
const PROCESSES = 3;
const ROUNDS = 40;
const SPACING_MS = 40;

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function startOpener(): {
  ready: Promise<void>;
  result: Promise<{ failures: string[] }>;
  start: (at: number) => void;
} {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', OPENER, dir, String(ROUNDS), String(SPACING_MS)],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const ready = lines.next().then(({ value }) => {
    if (value !== 'ready') throw new Error(`the opener said ${String(value)}`);
  });
  const result = ready.then(async () => {
    const { value } = await lines.next();
    const [code] = (await once(child, 'exit')) as [number | null];
    if (code !== 0) throw new Error(`the opener exited ${code}`);
    return JSON.parse(String(value)) as { failures: string[] };
  });
  return { ready, result, start: (at) => child.stdin.end(`${at}\n`) };
}

describe('SQLite files opened by several processes at once', () => {
  it(`opens each of ${ROUNDS} new files in all ${PROCESSES} processes, in WAL mode, migrated once`, async () => {
    dir = mkdtempSync(join(tmpdir(), 'chat-sqlite-open-'));
    const openers = Array.from({ length: PROCESSES }, startOpener);
    await Promise.all(openers.map((opener) => opener.ready));
    const at = Date.now() + 200;
    for (const opener of openers) opener.start(at);
    const results = await Promise.all(openers.map((opener) => opener.result));

    expect(results.flatMap((result) => result.failures)).toEqual([]);
    for (let round = 0; round < ROUNDS; round++) {
      const db = new Database(join(dir, `round-${round}.sqlite`), { readonly: true });
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      // Two migrations: the messages, then retention's index and table.
      expect(db.pragma('user_version', { simple: true })).toBe(2);
      db.close();
    }
  }, 60_000);
});
