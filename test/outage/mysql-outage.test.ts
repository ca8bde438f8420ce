/**
 * The database goes away and comes back, under a running chat.
 *
 * The app's pool reaches MariaDB through a TCP proxy that the test cuts
 * (every open connection is destroyed, new ones are refused, as when the
 * server is down or the network drops) and restores. No restart in between:
 * the pool must notice and recover by itself.
 */
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMysqlPool, MysqlStore } from '../../server/store/mysql-store.ts';
import { startTestChat, type TestChat } from '../helpers/chat.ts';
import { serviceUrl } from '../helpers/env.ts';
import { describeWith, needs } from '../helpers/needs.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { type TestDatabases, testDatabases } from '../store/mysql-database.ts';

const serverUrl = serviceUrl('MYSQL_URL');

interface Sent {
  key: string;
  text: string;
  status: number;
  id?: number;
}

describeWith(needs.service('MYSQL_URL'), 'MySQL outage', () => {
  describe('through a proxy that is cut and restored', () => {
    let databases: TestDatabases;
    let databaseUrl: string;
    let proxy: TcpProxy;
    let chat: TestChat;
    /** Every send the test made, with the status it got. */
    const sent: Sent[] = [];

    const send = async (key: string, text: string): Promise<Response> => {
      const res = await chat.post('/send', { key, text, nickname: 'Ann' });
      const body = (await res.clone().json()) as { id?: number };
      sent.push({ key, text, status: res.status, id: body.id });
      return res;
    };

    beforeAll(async () => {
      databases = testDatabases(serverUrl!);
      databaseUrl = await databases.create();
      const direct = new URL(databaseUrl);
      proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 3306) });
      const proxied = new URL(databaseUrl);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(proxy.port);
      const store = new MysqlStore(createMysqlPool(proxied.href));
      // The production store timeout (2 s): a send must answer within it.
      chat = await startTestChat({ pollTimeoutMs: 1_000, storeTimeoutMs: 2_000 }, { store });
    });

    afterAll(async () => {
      await chat?.close();
      await proxy?.close();
      await databases?.dropAll();
    });

    it('keeps every acknowledged message and answers 503 quickly while the database is away', async () => {
      // Before: the database is there.
      for (let i = 0; i < 3; i++)
        expect((await send(`before-${i}`, `before ${i}`)).status).toBe(200);
      expect((await chat.get('/health')).status).toBe(200);

      // A poll already waiting when the database goes away.
      const waiting = chat.recv('since=3');

      // Cut while a burst of sends is in flight: some land, some do not.
      const burst = Array.from({ length: 20 }, (_, i) => send(`burst-${i}`, `burst ${i}`));
      await Promise.race(burst);
      proxy.cut();
      await Promise.all(burst);

      // During: sends fail fast with 503 + Retry-After; nothing hangs.
      for (let i = 0; i < 3; i++) {
        const started = Date.now();
        const res = await send(`during-${i}`, `during ${i}`);
        expect(Date.now() - started).toBeLessThan(2_000);
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
          'store_unavailable',
        );
      }
      const health = await chat.get('/health');
      expect(health.status).toBe(503);
      expect(health.headers.get('retry-after')).toMatch(/^\d+$/);

      // A poll that starts during the outage still ends at its timeout.
      const sinceNow = Math.max(...sent.filter((s) => s.status === 200).map((s) => s.id!));
      const during = await chat.recv(`since=${sinceNow}`);
      expect(during).toMatchObject({ messages: [], cursor: sinceNow });
      // And so does the one that was waiting (it may have seen burst messages first).
      expect((await waiting).cursor).toBeGreaterThanOrEqual(3);

      // After: no restart, the very next send succeeds.
      proxy.restore();
      expect((await send('after-0', 'after 0')).status).toBe(200);
      expect((await chat.get('/health')).status).toBe(200);

      // Every send that was refused is retried with its key: stored once, whether
      // or not the refused attempt had landed.
      for (const refused of sent.filter((s) => s.status !== 200)) {
        expect((await send(refused.key, refused.text)).status).toBe(200);
      }

      // The database holds every acknowledged message, each key once, ids dense.
      const rows = await readAll(databaseUrl);
      expect(rows.map((r) => r.id)).toEqual(rows.map((_, i) => i + 1));
      const byKey = new Map(rows.map((r) => [r.key, r]));
      expect(byKey.size).toBe(rows.length);
      expect([...byKey.keys()].sort()).toEqual([...new Set(sent.map((s) => s.key))].sort());
      for (const ack of sent.filter((s) => s.status === 200)) {
        expect(byKey.get(ack.key)).toEqual({ id: ack.id, key: ack.key, text: ack.text });
      }
      expect(sent.filter((s) => s.status === 503).length).toBeGreaterThanOrEqual(3);
    });
  });
});

interface Row extends RowDataPacket {
  id: number;
  key: string;
  text: string;
}

/** The room's rows, read around the proxy. */
async function readAll(url: string): Promise<Row[]> {
  const conn = await createConnection(url);
  try {
    const [rows] = await conn.query<Row[]>(
      "SELECT id, `key`, text FROM chat_messages WHERE room = 'main' ORDER BY id",
    );
    return rows.map((r) => ({ id: r.id, key: r.key, text: r.text }) as Row);
  } finally {
    await conn.end();
  }
}
