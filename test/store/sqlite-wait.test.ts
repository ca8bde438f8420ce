/**
 * The SQLite store's bounded wait (`SQLITE_WAIT_MS`, sqlite-store.ts): a
 * quick write is acknowledged in the turn that made it, as the synchronous
 * store did, and a write the disk holds up costs the event loop at most one
 * wait. Which writes are waited for is judged by the worker's own time and
 * by what is still unanswered, never by a round trip that waited for a busy
 * loop (bench T6 fell into not waiting at all when it was).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../server/store/sqlite-store.ts';
import { type HeldLock, holdWriteLock } from '../helpers/sqlite-lock.ts';

/** Long, so a loaded machine's worker always answers a quick write within it. */
const WAIT_MS = 1_000;

let dir: string;
let file: string;
let store: SqliteStore;
let lock: HeldLock | undefined;
let sent = 0;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'chat-sqlite-wait-'));
  file = join(dir, 'chat.sqlite');
  store = new SqliteStore(file, { waitMs: WAIT_MS, timeoutMs: 10_000 });
  await store.init();
});

afterEach(async () => {
  await lock?.release();
  lock = undefined;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const append = () => store.append({ room: 'wait', nickname: 'Ann', text: `m${++sent}` });

/** Whether `written` settles before the event loop's next turn. */
async function inThisTurn(written: Promise<unknown>): Promise<boolean> {
  const nextTurn = new Promise((resolve) => setImmediate(() => resolve('next turn')));
  return (await Promise.race([written.then(() => 'this turn'), nextTurn])) === 'this turn';
}

/** How long `append()` held this thread, and what it returned. */
function timedAppend() {
  const started = performance.now();
  const written = append();
  return { written, heldMs: performance.now() - started };
}

describe('the SQLite store, while writes are quick', () => {
  it('acknowledges each write in the turn that made it', async () => {
    for (let i = 0; i < 5; i++) expect(await inThisTurn(append())).toBe(true);
  });
});

describe('the SQLite store, while the disk holds a write up', () => {
  it('waits once, not for the writes behind it, and waits again once a write is quick', async () => {
    lock = await holdWriteLock(file);
    const first = timedAppend();
    // The worker is stuck on the lock: this thread waited out the whole wait.
    expect(first.heldMs).toBeGreaterThanOrEqual(WAIT_MS * 0.9);
    const second = timedAppend();
    // One write is still unanswered: the next one does not wait at all.
    expect(second.heldMs).toBeLessThan(WAIT_MS / 4);
    expect(await inThisTurn(second.written)).toBe(false);

    await lock.release();
    lock = undefined;
    await Promise.all([first.written, second.written]);
    // The last write answered ran quickly: the next one is waited for again.
    expect(await inThisTurn(append())).toBe(true);
  });

  it('does not wait for the write after a slow one, and waits again after a quick one', async () => {
    lock = await holdWriteLock(file);
    const slow = append();
    await lock.release();
    lock = undefined;
    await slow;
    // It ran, in the worker, for as long as the lock was held.
    const next = append();
    expect(await inThisTurn(next)).toBe(false);
    // Once that one is answered (quickly), the one after is waited for.
    await next;
    expect(await inThisTurn(append())).toBe(true);
  });
});
