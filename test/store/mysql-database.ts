/**
 * Throwaway MariaDB/MySQL databases for tests: each run creates databases
 * named `chat_test_<random>` on the server of `MYSQL_URL`, and drops them
 * when it is done.
 */
import { randomBytes } from 'node:crypto';
import { createConnection } from 'mysql2/promise';

export interface TestDatabases {
  /** Creates an empty utf8mb4 database; returns its URL. */
  create(): Promise<string>;
  dropAll(): Promise<void>;
}

export function testDatabases(serverUrl: string): TestDatabases {
  const prefix = `chat_test_${randomBytes(4).toString('hex')}`;
  const created: string[] = [];
  const admin = async () => createConnection(serverUrl);
  return {
    async create() {
      const name = `${prefix}_${created.length + 1}`;
      const conn = await admin();
      try {
        await conn.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
      } finally {
        await conn.end();
      }
      created.push(name);
      const url = new URL(serverUrl);
      url.pathname = `/${name}`;
      return url.href;
    },
    async dropAll() {
      const conn = await admin();
      try {
        for (const name of created.splice(0))
          await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
      } finally {
        await conn.end();
      }
    },
  };
}
