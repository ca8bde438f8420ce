/** A throw-away MySQL database for T2/T3, created from `MYSQL_URL` and dropped after. */
import { createConnection } from 'mysql2/promise';

export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function openMysqlDatabase(serverUrl: string): Promise<ScratchDatabase> {
  const name = `chat_bench_${Math.random().toString(36).slice(2, 10)}`;
  const admin = await createConnection(serverUrl);
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await admin.end();
    },
  };
}
