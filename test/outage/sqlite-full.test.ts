/**
 * A full disk, simulated with `PRAGMA max_page_count` (`SQLITE_MAX_MB`):
 * sends get 503, and `/health` tells the truth (issue 19, item 6). It is
 * judged from the sends' own writes, so good reads and health probes do not
 * bring it back; a write that succeeds does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestChat, type TestChat } from '../helpers/chat.ts';

/** About 6 KB of UTF-8: more than a page holds, so every send needs pages of its own. */
const BIG = '中'.repeat(2_000);

describe('SQLite on a full disk', () => {
  let dir: string;
  let file: string;
  let chat: TestChat;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chat-sqlite-full-'));
    file = join(dir, 'chat.sqlite');
    chat = await startTestChat(
      { databaseUrl: `sqlite:${file}`, sqliteMaxMb: 1 },
      { store: undefined },
    );
  });

  afterAll(async () => {
    await chat.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const send = (text: string) => chat.post('/send', { nickname: 'Ann', text });
  const health = async () => (await chat.get('/health')).status;
  const storeUp = async () => {
    const text = await (await chat.get('/metrics')).text();
    return Number(/^chat_store_up (\d)/m.exec(text)?.[1]);
  };

  it('is healthy while writes succeed', async () => {
    expect((await send('small')).status).toBe(200);
    expect(await health()).toBe(200);
  });

  it('answers sends 503 once the file is full, and /health 503', async () => {
    // 1 MiB holds fewer than 200 such messages: the loop ends well before its bound.
    let status = 200;
    let stored = 0;
    for (; stored < 1_000 && status === 200; stored++) status = (await send(BIG)).status;
    expect(status).toBe(503);
    expect(stored).toBeGreaterThan(10);
    expect(await health()).toBe(503);
    expect(await storeUp()).toBe(0);
  });

  it('stays 503 through good reads and probes: only a write can tell', async () => {
    expect((await chat.get('/history?room=main')).status).toBe(200);
    expect(await health()).toBe(503);
    expect(await health()).toBe(503);
    expect(await storeUp()).toBe(0);
  });

  it('is healthy again once space is freed and a send is stored', async () => {
    // An operator deletes old messages from another connection: their pages are free again.
    const db = new Database(file);
    db.prepare("DELETE FROM messages WHERE room = 'main' AND id > 1").run();
    db.close();
    expect(await health()).toBe(503); // Nothing has written yet.
    expect((await send(BIG)).status).toBe(200);
    expect(await health()).toBe(200);
    expect(await storeUp()).toBe(1);
  });
});
