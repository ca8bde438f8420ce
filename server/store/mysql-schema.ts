/**
 * The MySQL/MariaDB schema and its migrations.
 *
 * Migrations are numbered by their place in `migrations`; `chat_schema_version`
 * records how many have been applied. `migrate()` runs them under a named
 * lock (`GET_LOCK`, scoped to the database), so two processes starting at
 * once on an empty database apply each step exactly once: the second waits
 * for the lock, then finds the work done. DDL commits implicitly in MySQL,
 * so each step is written to be safe to re-run (`IF NOT EXISTS`) in case a
 * process dies between a step and its version bump.
 *
 * The SQL here is the common subset of MySQL 8 and MariaDB 10.11.
 */
import type { PoolConnection, RowDataPacket } from 'mysql2/promise';

/** Every table is utf8mb4 with a binary collation: text round-trips byte for byte, keys compare exactly. */
const TABLE_OPTIONS = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin';

/** Each entry is one schema version: its statements, applied in order. */
export const migrations: readonly (readonly string[])[] = [
  [
    // One row per room: the last id handed out. Its row lock is what orders writers (see mysql-store.ts).
    `CREATE TABLE IF NOT EXISTS chat_rooms (
       room    VARCHAR(32)     NOT NULL,
       last_id BIGINT UNSIGNED NOT NULL,
       PRIMARY KEY (room)
     ) ${TABLE_OPTIONS}`,
    // PRIMARY KEY (room, id) is the clustered index: "after id N" is a range
    // scan forward from (R, N), "latest before id N" a range scan backward.
    // UNIQUE (room, key) makes a repeated idempotency key a duplicate-key error
    // (NULL keys never collide).
    `CREATE TABLE IF NOT EXISTS chat_messages (
       room     VARCHAR(32)     NOT NULL,
       id       BIGINT UNSIGNED NOT NULL,
       nickname VARCHAR(32)     NOT NULL,
       text     VARCHAR(2000)   NOT NULL,
       time     DATETIME(3)     NOT NULL COMMENT 'UTC',
       \`key\`  VARCHAR(64)     NULL,
       PRIMARY KEY (room, id),
       UNIQUE KEY chat_messages_room_key (room, \`key\`)
     ) ${TABLE_OPTIONS}`,
  ],
  [
    // Retention (mysql-store.ts, \`prune\`): how far each room has been cut,
    // so a cursor behind it is told, and the oldest messages by time
    // without a scan. MySQL has no CREATE INDEX IF NOT EXISTS: \`migrate\`
    // takes a duplicate index name for a step already applied.
    `CREATE TABLE IF NOT EXISTS chat_pruned (
       room      VARCHAR(32)     NOT NULL,
       pruned_id BIGINT UNSIGNED NOT NULL,
       PRIMARY KEY (room)
     ) ${TABLE_OPTIONS}`,
    'CREATE INDEX chat_messages_time ON chat_messages (time)',
  ],
];

/** ER_DUP_KEYNAME: the index a re-run step creates is there already. */
const DUPLICATE_KEY_NAME = 1061;

/**
 * Named locks are server-wide: the name includes the database, so two chats
 * on one server don't wait on each other. Hashed, because MySQL refuses lock
 * names longer than 64 characters and a database name may be 64 alone.
 */
const LOCK_NAME = "CONCAT('lpchat.migrate.', SHA1(DATABASE()))";

/** How long a starting process waits for another one's migration, in seconds. */
const LOCK_WAIT_S = 30;

/** Brings the schema to the latest version; returns the version it found. */
export async function migrate(conn: PoolConnection): Promise<number> {
  const [[lock]] = await conn.query<LockRow[]>(`SELECT GET_LOCK(${LOCK_NAME}, ?) AS got`, [
    LOCK_WAIT_S,
  ]);
  if (lock?.got !== 1) throw new Error('Timed out waiting for another process to migrate');
  try {
    await conn.query(
      `CREATE TABLE IF NOT EXISTS chat_schema_version (
         one     TINYINT NOT NULL PRIMARY KEY,
         version INT     NOT NULL
       ) ${TABLE_OPTIONS}`,
    );
    await conn.query('INSERT IGNORE INTO chat_schema_version (one, version) VALUES (1, 0)');
    const [[row]] = await conn.query<VersionRow[]>(
      'SELECT version FROM chat_schema_version WHERE one = 1',
    );
    const found = row?.version ?? 0;
    for (let version = found; version < migrations.length; version += 1) {
      for (const sql of migrations[version]!) {
        await conn.query(sql).catch((error: unknown) => {
          if ((error as { errno?: unknown }).errno !== DUPLICATE_KEY_NAME) throw error;
        });
      }
      await conn.query('UPDATE chat_schema_version SET version = ? WHERE one = 1', [version + 1]);
    }
    return found;
  } finally {
    await conn.query(`SELECT RELEASE_LOCK(${LOCK_NAME})`);
  }
}

interface LockRow extends RowDataPacket {
  got: number | null;
}

interface VersionRow extends RowDataPacket {
  version: number;
}
