/**
 * Picks the store from `DATABASE_URL` by its scheme. The entry point owns the
 * connection string; each store is handed what it needs (a path, a mysql2
 * pool, a MongoDB client).
 *
 * The MySQL and MongoDB modules are imported only when chosen, so a chat on
 * SQLite never loads (or needs) their drivers.
 */
import type { Config } from '../core/config.ts';
import { ClusterWriter, type StoreRelay } from './cluster-writer.ts';
import { MemoryStore } from './memory-store.ts';
import { SqliteStore } from './sqlite-store.ts';
import type { MessageStore } from './store.ts';

/** The settings a store takes from the chat's configuration (server/core/config.ts). */
export type OpenStoreOptions = Partial<
  Pick<Config, 'storeTimeoutMs' | 'sqliteMaxMb' | 'sqliteWaitMs'>
> & {
  /**
   * A cluster worker's: SQLite writes go to the primary's one writer
   * (`cluster-writer.ts`), which relays what it commits to the other
   * workers when asked (`relay`: their bus is the cluster's IPC), into `relay`.
   */
  clusterWriter?: { relay: StoreRelay | undefined };
};

export async function openStore(
  databaseUrl: string,
  options: OpenStoreOptions = {},
): Promise<MessageStore> {
  const scheme = databaseUrl.slice(0, databaseUrl.indexOf(':'));
  const { clusterWriter } = options;
  switch (scheme) {
    case 'memory':
      return new MemoryStore();
    case 'sqlite':
      return new SqliteStore(sqlitePath(databaseUrl), {
        timeoutMs: options.storeTimeoutMs,
        maxMb: options.sqliteMaxMb,
        waitMs: options.sqliteWaitMs,
        writer: clusterWriter
          ? (file, writerOptions) => new ClusterWriter(file, writerOptions, clusterWriter.relay)
          : undefined,
      });
    case 'mysql': {
      const { MysqlStore, createMysqlPool } = await import('./mysql-store.ts');
      return new MysqlStore(createMysqlPool(databaseUrl));
    }
    case 'mongodb':
    case 'mongodb+srv': {
      const { MongoStore, createMongoClient } = await import('./mongodb/store.ts');
      return new MongoStore(createMongoClient(databaseUrl));
    }
    default:
      throw new Error(`No store for DATABASE_URL scheme "${scheme}:"`);
  }
}

/** `sqlite:data/chat.sqlite` (relative to the working folder), `sqlite:///abs/file`, `sqlite::memory:`. */
export function sqlitePath(databaseUrl: string): string {
  const rest = databaseUrl.slice('sqlite:'.length);
  if (rest.startsWith('//')) return rest.slice(2) || 'data/chat.sqlite';
  return rest || 'data/chat.sqlite';
}
