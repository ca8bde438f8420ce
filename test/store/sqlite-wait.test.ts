/**
 * The SQLite store's bounded wait (`SQLITE_WAIT_MS`, sqlite-store.ts): a
 * quick write is acknowledged in the turn that made it, as the synchronous
 * store did, and a write the disk holds up costs the event loop at most one
 * wait, at the end of a turn. Which writes are waited for is judged by the worker's own time and
 * by what is still unanswered, never by a round trip that waited for a busy
 * loop (bench T6 fell into not waiting at all when it was).
 */
import { channel, subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, get, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REQUEST_START, SqliteStore } from '../../server/store/sqlite-store.ts';
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

/** How long the event loop was held before its next turn came. */
async function turnMs(): Promise<number> {
  const started = performance.now();
  await new Promise((resolve) => setImmediate(resolve));
  return performance.now() - started;
}

describe('the SQLite store, while writes are quick', () => {
  it('acknowledges each write in the turn that made it', async () => {
    for (let i = 0; i < 5; i++) expect(await inThisTurn(append())).toBe(true);
  });

  it('takes a reply as the next request comes in, before the end of the turn', async () => {
    let settled = false;
    const written = append().then(() => {
      settled = true;
    });
    // As node:http does for each request it reads; microtasks only, so the
    // end of the turn (where the store would wait for the reply) never comes.
    const requestStart = channel(REQUEST_START);
    const giveUp = performance.now() + 5_000;
    while (!settled && performance.now() < giveUp) {
      requestStart.publish({});
      await Promise.resolve();
    }
    expect(settled).toBe(true);
    await written;
  });
});

describe('the channel the store listens to', () => {
  it('is published by node:http for each request, before its request event', async () => {
    const seen: unknown[] = [];
    const onStart = (message: unknown) =>
      seen.push((message as { request: IncomingMessage }).request);
    subscribe(REQUEST_START, onStart);
    const server = createServer((req, res) => res.end(String(seen.includes(req))));
    try {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const body = await new Promise<string>((resolve, reject) => {
        get({ host: '127.0.0.1', port, path: '/' }, (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolve(text));
        }).on('error', reject);
      });
      expect(body).toBe('true');
    } finally {
      unsubscribe(REQUEST_START, onStart);
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('the SQLite store, while the disk holds a write up', () => {
  it('waits once, not for the writes behind it, and waits again once a write is quick', async () => {
    lock = await holdWriteLock(file);
    const first = append();
    // The worker is stuck on the lock: the end of this turn waited out the whole wait.
    expect(await turnMs()).toBeGreaterThanOrEqual(WAIT_MS * 0.9);
    const second = append();
    // One write is still unanswered: the next one is not waited for at all.
    expect(await inThisTurn(second)).toBe(false);
    expect(await turnMs()).toBeLessThan(WAIT_MS / 4);

    await lock.release();
    lock = undefined;
    await Promise.all([first, second]);
    // The last write answered ran quickly: the next one is waited for again.
    expect(await inThisTurn(append())).toBe(true);
  });

  it('does not wait for the write after a slow one, and waits again after a quick one', async () => {
    lock = await holdWriteLock(file);
    const slow = append();
    // Held past the end-of-turn wait, so the write runs longer than it in the worker.
    expect(await turnMs()).toBeGreaterThanOrEqual(WAIT_MS * 0.9);
    // Held half a wait more: the worker's own time starts when it takes the
    // write up, which on a loaded machine can be well after the append.
    await new Promise((resolve) => setTimeout(resolve, WAIT_MS / 2));
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
