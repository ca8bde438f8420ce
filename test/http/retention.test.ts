/**
 * Bounded storage through the chat (server/store/retention.ts): a poll or a
 * history page behind what retention deleted is told `expired`, and the
 * stored-bytes budget per address (`SEND_KB_PER_HOUR`).
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { HistoryAnswer } from '../../protocol/protocol.ts';
import { SqliteStore } from '../../server/store/sqlite-store.ts';
import { startTestChat, type TestChat } from '../helpers/chat.ts';
import { fromAddress } from '../helpers/from-address.ts';

const dir = mkdtempSync(join(tmpdir(), 'chat-retention-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('retention', () => {
  it('tells a poll and a history page behind the oldest kept message that older ones expired', async () => {
    const file = join(dir, 'expired.sqlite');
    const options = { retentionPerRoom: 3, retentionIntervalMs: 3_600_000 };
    const first = await startTestChat(options, { store: new SqliteStore(file) });
    try {
      for (let i = 1; i <= 10; i += 1) await first.send({ text: `m${i}` });
      expect(await first.retention.run()).toBe(7);
    } finally {
      await first.close();
    }
    // Another process on the file: its message log holds none of the room,
    // so the polls read the store.
    const chat: TestChat = await startTestChat(options, { store: new SqliteStore(file) });
    try {
      const behind = await chat.recv('room=main&since=1');
      expect(behind.messages.map((m) => m.id)).toEqual([8, 9, 10]);
      expect(behind).toMatchObject({ cursor: 10, expired: true });
      const current = await chat.recv('room=main&since=8');
      expect(current.messages.map((m) => m.id)).toEqual([9, 10]);
      expect(current.expired).toBeUndefined();

      const page = async (query: string) =>
        (await (await chat.get(`/history?${query}`)).json()) as HistoryAnswer;
      expect(await page('room=main')).toMatchObject({ expired: true });
      expect((await page('room=main')).messages.map((m) => m.id)).toEqual([8, 9, 10]);
      // A full page says nothing; the next one, empty, says why.
      expect(await page('room=main&before=10&limit=2')).toEqual({
        messages: [expect.objectContaining({ id: 8 }), expect.objectContaining({ id: 9 })],
      });
      expect(await page('room=main&before=8')).toEqual({ messages: [], expired: true });
      // A room retention never cut is not marked.
      await chat.send({ room: 'other', text: 'hi' });
      expect(await page('room=other')).toEqual({
        messages: [expect.objectContaining({ id: 1 })],
      });
    } finally {
      await chat.close();
    }
  });

  it('keeps a room to RETENTION_PER_ROOM as sends come, a batch a run', async () => {
    const chat = await startTestChat(
      { retentionPerRoom: 5, retentionBatch: 2, retentionIntervalMs: 3_600_000 },
      { store: new SqliteStore(join(dir, 'count.sqlite')) },
    );
    try {
      for (let i = 1; i <= 9; i += 1) await chat.send({ text: `m${i}` });
      expect(await chat.retention.run()).toBe(2);
      for (let i = 10; i <= 11; i += 1) await chat.send({ text: `m${i}` });
      expect(await chat.retention.run()).toBe(2);
      expect(await chat.retention.run()).toBe(2);
      expect(await chat.retention.run()).toBe(0);
      expect((await chat.store.before('main', undefined, 100)).map((m) => m.id)).toEqual([
        7, 8, 9, 10, 11,
      ]);
    } finally {
      await chat.close();
    }
  });
});

describe('retention on its own', () => {
  it('runs at start and every RETENTION_INTERVAL_MS, down to RETENTION_PER_ROOM', async () => {
    const chat = await startTestChat({ retentionPerRoom: 2, retentionIntervalMs: 100 });
    try {
      for (let i = 1; i <= 6; i += 1) await chat.send({ text: `m${i}` });
      const kept = async () => (await chat.store.before('main', undefined, 100)).map((m) => m.id);
      // Each run is an event; a few are enough for six sends.
      for (let runs = 0; runs < 10 && (await kept()).length > 2; runs += 1) {
        await once(chat.retention, 'ran');
      }
      expect(await kept()).toEqual([5, 6]);
      expect(await chat.store.pruned('main')).toBe(4);
    } finally {
      await chat.close();
    }
  });
});

describe('stored bytes per person behind one address (SEND_KB_PER_HOUR_PER_CLIENT)', () => {
  it("refuses a person past its share, serves its neighbours, and holds the address's budget", async () => {
    const chat = await startTestChat({ sendKbPerHour: 8, sendKbPerHourPerClient: 4 });
    const nat = fromAddress(chat.url, '127.0.0.1');
    const long = (client: string) => ({
      body: JSON.stringify({ text: 'x'.repeat(2000), nickname: 'Ann', client }),
      headers: { 'content-type': 'application/json' },
    });
    const statuses = async (client: string, count: number) => {
      const seen: number[] = [];
      for (let i = 0; i < count; i += 1)
        seen.push((await nat('POST', '/send', long(client))).status);
      return seen;
    };
    try {
      expect(await statuses('greedy-browser-1', 3)).toEqual([200, 200, 429]);
      // Its neighbour's share is untouched.
      expect(await statuses('neighbour-browser', 2)).toEqual([200, 200]);
      // The address's 8 KiB are used up: a third person waits for the next hour.
      expect(await statuses('third-browser-01', 1)).toEqual([429]);
    } finally {
      nat.close();
      await chat.close();
    }
  });
});

describe('stored bytes per address (SEND_KB_PER_HOUR)', () => {
  it('refuses an address past its budget with 429 storage_limited, and serves another', async () => {
    const chat = await startTestChat({ sendKbPerHour: 4 });
    const one = fromAddress(chat.url, '127.0.0.1');
    const two = fromAddress(chat.url, '127.0.0.2');
    const long = JSON.stringify({ text: 'x'.repeat(2000), nickname: 'Ann' });
    const post = { body: long, headers: { 'content-type': 'application/json' } };
    try {
      expect((await one('POST', '/send', post)).status).toBe(200);
      expect((await one('POST', '/send', post)).status).toBe(200);
      const refused = await one('POST', '/send', post);
      expect(refused.status).toBe(429);
      expect(JSON.parse(refused.body).error.code).toBe('storage_limited');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      // Nothing of it was stored.
      expect((await chat.store.before('main', undefined, 10)).length).toBe(2);
      expect((await two('POST', '/send', post)).status).toBe(200);
    } finally {
      one.close();
      two.close();
      await chat.close();
    }
  });
});
