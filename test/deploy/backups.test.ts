/**
 * The backup and restore commands of docs/deploy-linux.md ("Backups and
 * restores"), read from the guide and run against real databases: the chat's
 * own stores write the messages, the guide's commands back them up and
 * restore them, and the stores read them back.
 *
 * What the test changes in the commands: paths under /var become temporary
 * ones; `sudo` runs as this user and `systemctl` only records its arguments
 * (no systemd runs here); the dated backup name of the restore becomes
 * today's; `-u root -p` (a password prompt) and the database `chat` become
 * MYSQL_URL's user and host and a throwaway database.
 * MongoDB's commands are not run: Debian 12 ships no MongoDB tools.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMysqlPool, MysqlStore } from '../../server/store/mysql-store.ts';
import { SqliteStore } from '../../server/store/sqlite-store.ts';
import type { MessageStore } from '../../server/store/store.ts';
import { serviceUrl } from '../helpers/env.ts';
import { describeWith, needs } from '../helpers/needs.ts';
import { testDatabases } from '../store/mysql-database.ts';
import { guideBlock, runGuideScript, withLines } from './linux-guide.ts';

const STAND_INS = `
sudo() { "$@"; }
systemctl() { echo "systemctl $*" >> "$TEST_DIR/calls.log"; }
`;

const today = () => new Date().toISOString().slice(0, 10);

async function appendMany(store: MessageStore, count: number, from = 1): Promise<void> {
  for (let i = from; i < from + count; i += 1) {
    await store.append({ room: 'main', nickname: 'Ada', text: `message ${i}` });
  }
}

async function texts(store: MessageStore): Promise<string[]> {
  return (await store.after('main', 0, 10_000)).map((m) => m.text);
}

const expected = (count: number) => Array.from({ length: count }, (_, i) => `message ${i + 1}`);

describeWith(
  needs.command('sqlite3'),
  'docs/deploy-linux.md: the SQLite backup and restore',
  () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'chat-backup-'));
      await mkdir(join(dir, 'state'));
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    const local = (script: string) =>
      script.replaceAll('/var/lib/chat', join(dir, 'state')).replaceAll('/var/backups', dir);
    const run = (script: string) => runGuideScript(STAND_INS, script, dir, { TEST_DIR: dir });

    it('backs up a database the chat is writing, and restores every message stored before it', async () => {
      const file = join(dir, 'state', 'chat.sqlite');
      const store = new SqliteStore(file);
      await store.init();
      await appendMany(store, 100);
      // The backup runs while the chat goes on writing.
      const writing = appendMany(store, 100, 101);
      await run(local(await guideBlock('backup-sqlite')));
      await writing;
      await appendMany(store, 50, 201);
      expect(await texts(store)).toEqual(expected(250));
      await store.close();

      await run(
        withLines(local(await guideBlock('restore-sqlite')), [
          ['chat-2026-12-01.sqlite', `chat-${today()}.sqlite`],
        ]),
      );
      const restored = new SqliteStore(file);
      await restored.init();
      try {
        const got = await texts(restored);
        // Every message stored before the backup began, then a dense run of
        // some of those written during it; none of those written after it.
        expect(got.length).toBeGreaterThanOrEqual(100);
        expect(got.length).toBeLessThanOrEqual(200);
        expect(got).toEqual(expected(got.length));
      } finally {
        await restored.close();
      }
    });
  },
);

describeWith(
  needs.service('MYSQL_URL'),
  'docs/deploy-linux.md: the MariaDB backup and restore',
  () => {
    const databases = testDatabases(serviceUrl('MYSQL_URL')!);
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'chat-backup-mysql-'));
    });
    afterAll(async () => {
      await databases.dropAll();
      await rm(dir, { recursive: true, force: true });
    });

    it('dumps the chat’s database, and the dump recreates it with every message', async () => {
      const url = await databases.create();
      const { hostname, port, username, pathname } = new URL(url);
      const name = pathname.slice(1);
      const login = `-u ${decodeURIComponent(username)} -h ${hostname} -P ${port || '3306'}`;
      const store = new MysqlStore(createMysqlPool(url));
      await store.init();
      await appendMany(store, 30);
      await run(
        withLines(await guideBlock('backup-mariadb'), [
          ['--databases chat -u root -p', `--databases ${name} ${login}`],
        ]),
      );
      await appendMany(store, 5, 31); // after the dump: gone once it is restored
      await store.close();

      await run(
        withLines(await guideBlock('restore-mariadb'), [
          ['-u root -p', login],
          ['chat-2026-12-01.sql', `chat-${today()}.sql`],
        ]),
      );
      const restored = new MysqlStore(createMysqlPool(url));
      await restored.init();
      try {
        expect(await texts(restored)).toEqual(expected(30));
      } finally {
        await restored.close();
      }
    });

    const run = (script: string) => runGuideScript(STAND_INS, script, dir, { TEST_DIR: dir });
  },
);
