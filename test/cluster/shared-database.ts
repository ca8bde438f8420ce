/**
 * The database several server processes share in a scale-out test.
 *
 * With `MYSQL_URL` (required in CI): a fresh MariaDB database,
 * `chat_test_<random>`, dropped afterwards. Without it (a laptop with no
 * MariaDB): a SQLite file in a temporary folder, which processes on one
 * machine can share (WAL, and the store's `BEGIN IMMEDIATE` serialises writers).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serviceUrl } from '../helpers/env.ts';
import { testDatabases } from '../store/mysql-database.ts';

export interface SharedDatabase {
  /** A `DATABASE_URL` for the servers. */
  url: string;
  kind: 'mysql' | 'sqlite';
  drop(): Promise<void>;
}

export async function createSharedDatabase(): Promise<SharedDatabase> {
  const mysqlUrl = serviceUrl('MYSQL_URL');
  return mysqlUrl === undefined ? createSqliteFile() : createMysqlDatabase(mysqlUrl);
}

/** A SQLite file in a temporary folder, whatever the environment offers. */
export function createSqliteFile(): SharedDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'chat-cluster-'));
  return {
    url: `sqlite://${join(dir, 'chat.sqlite')}`,
    kind: 'sqlite',
    async drop() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function createMysqlDatabase(mysqlUrl: string): Promise<SharedDatabase> {
  const databases = testDatabases(mysqlUrl);
  return { url: await databases.create(), kind: 'mysql', drop: () => databases.dropAll() };
}

/** A Redis prefix no other test uses: channels and keys of one test stay its own. */
export function uniquePrefix(): string {
  return `lpchat_test_${randomBytes(6).toString('hex')}`;
}
