/**
 * The MySQL / MariaDB store (mysql2). The pool is handed in: the entry point
 * (`open-store.ts`, `createMysqlPool`) owns the URL and the pool settings.
 *
 * Ordering: an auto-increment id would be allocated at insert time but become
 * visible at commit time, so id 8 can commit (and be read past) before id 7.
 * Instead each room has a row in `chat_rooms` holding its last id, and an
 * append bumps it inside the insert's own transaction:
 *
 *   INSERT INTO chat_rooms … ON DUPLICATE KEY UPDATE last_id = LAST_INSERT_ID(last_id + n)
 *
 * That statement takes the room row's exclusive lock, held until COMMIT, so
 * writers of one room (from any connection or process) allocate and commit
 * one at a time: commit order is id order, ids are dense (a rolled-back
 * append gives its number back), and a reader never sees id n+1 before id n.
 * Writers of different rooms do not wait on each other.
 *
 * The transaction allocates ids for a whole batch of waiting sends at once
 * (`mysql-appender.ts`), which also checks idempotency keys under that lock;
 * the `(room, key)` unique index backs it up.
 */
import {
  createPool,
  type ExecuteValues,
  type Pool,
  type PoolOptions,
  type ResultSetHeader,
  type RowDataPacket,
} from 'mysql2/promise';
import { fromSqlTime, MysqlAppender, toSqlTime } from './mysql-appender.ts';
import { isUnavailable, STATEMENT_TIMEOUT_MS, withConnection } from './mysql-connection.ts';
import { migrate } from './mysql-schema.ts';
import {
  type AppendResult,
  cutThrough,
  type Message,
  type MessageStore,
  type NewMessage,
  type PrunePolicy,
  StoreUnavailableError,
} from './store.ts';

const COLUMNS = 'id, room, nickname, text, time';
const AFTER = `SELECT ${COLUMNS} FROM chat_messages WHERE room = ? AND id > ? ORDER BY id LIMIT ?`;
const ENDS =
  'SELECT room, MIN(id) AS oldest, MAX(id) AS head FROM chat_messages WHERE room IN (?) GROUP BY room';
// The oldest rows by time (the index), grouped: how far each room has expired.
const EXPIRED = `SELECT room, MAX(id) AS through FROM (
  SELECT room, id FROM chat_messages WHERE time < ? ORDER BY time LIMIT ?
) AS oldest GROUP BY room`;
const DELETE = 'DELETE FROM chat_messages WHERE room = ? AND id <= ?';
const NOTE_PRUNED = `INSERT INTO chat_pruned (room, pruned_id) VALUES (?, ?)
  ON DUPLICATE KEY UPDATE pruned_id = GREATEST(pruned_id, VALUES(pruned_id))`;
const BEFORE = `SELECT ${COLUMNS} FROM chat_messages WHERE room = ? AND id < ? ORDER BY id DESC LIMIT ?`;

/**
 * Pool settings for the chat: fail fast when the server is away (a send must
 * answer 503 well within its 2 s budget), keep idle sockets alive through
 * NATs, and talk utf8mb4. Query parameters of the URL (`?connectionLimit=50`)
 * override these defaults; `options` overrides both.
 */
export function createMysqlPool(url: string, options: PoolOptions = {}): Pool {
  const defaults: Record<string, unknown> = {
    connectionLimit: 20,
    maxIdle: 20,
    idleTimeout: 60_000,
    connectTimeout: 1_500,
    enableKeepAlive: true,
    charset: 'UTF8MB4_BIN',
  };
  // mysql2 lets explicit options win over the URL's: step aside where the URL says.
  for (const key of new URL(url).searchParams.keys()) delete defaults[key];
  return createPool({ uri: url, ...defaults, ...options });
}

interface HeadRow extends RowDataPacket {
  room: string;
  head: number | string;
}

interface PrunedRow extends RowDataPacket {
  pruned_id: number | string;
}

interface EndsRow extends RowDataPacket {
  room: string;
  oldest: number | string;
  head: number | string;
}

interface ThroughRow extends RowDataPacket {
  room: string;
  through: number | string;
}

interface MessageRow extends RowDataPacket {
  id: number;
  room: string;
  nickname: string;
  text: string;
  /** `YYYY-MM-DD HH:MM:SS.mmm`, UTC (read with `dateStrings`, so the pool's timezone setting never applies). */
  time: string;
}

export class MysqlStore implements MessageStore {
  readonly kind = 'mysql';
  readonly #pool: Pool;
  readonly #appender: MysqlAppender;

  constructor(pool: Pool) {
    this.#pool = pool;
    this.#appender = new MysqlAppender(pool);
  }

  async init(): Promise<void> {
    await this.#unavailableOnError(() => withConnection(this.#pool, migrate));
  }

  append(input: NewMessage): Promise<AppendResult> {
    return this.#unavailableOnError(() => this.#appender.append(input));
  }

  async after(room: string, since: number, limit: number): Promise<Message[]> {
    return this.#unavailableOnError(async () => this.#select(AFTER, [room, since, String(limit)]));
  }

  async before(room: string, before: number | undefined, limit: number): Promise<Message[]> {
    return this.#unavailableOnError(async () => {
      const newestFirst = await this.#select(BEFORE, [
        room,
        before ?? Number.MAX_SAFE_INTEGER,
        String(limit),
      ]);
      return newestFirst.reverse();
    });
  }

  async heads(rooms: readonly string[]): Promise<Map<string, number>> {
    if (rooms.length === 0) return new Map();
    return this.#unavailableOnError(async () => {
      const [rows] = await withConnection(this.#pool, (conn) =>
        conn.query<HeadRow[]>(
          {
            sql: 'SELECT room, MAX(id) AS head FROM chat_messages WHERE room IN (?) GROUP BY room',
            timeout: STATEMENT_TIMEOUT_MS,
          },
          [rooms],
        ),
      );
      return new Map(rows.map((row) => [row.room, Number(row.head)]));
    });
  }

  /**
   * Retention as SQLite's (\`SqliteFile.prune\`): each room cut from its
   * oldest id, a bounded number of rows per call, its newest kept. Deletes
   * only ids below the room's head, which no append touches, so no lock on
   * the room's counter row is needed.
   */
  async prune(policy: PrunePolicy): Promise<number> {
    return this.#unavailableOnError(() =>
      withConnection(this.#pool, async (conn) => {
        const query = async <T extends RowDataPacket[]>(sql: string, values: unknown[]) =>
          (await conn.query<T>({ sql, timeout: STATEMENT_TIMEOUT_MS }, values))[0];
        const targets = new Map<string, number>();
        const ends = new Map<string, { oldest: number; head: number }>();
        const readEnds = async (rooms: string[]) => {
          if (rooms.length === 0) return;
          for (const row of await query<EndsRow[]>(ENDS, [rooms])) {
            ends.set(row.room, { oldest: Number(row.oldest), head: Number(row.head) });
          }
        };
        await readEnds([...policy.rooms]);
        for (const [room, { head }] of ends) {
          if (head > policy.keepPerRoom) targets.set(room, head - policy.keepPerRoom);
        }
        const cutoff = toSqlTime(policy.olderThan.toISOString());
        for (const row of await query<ThroughRow[]>(EXPIRED, [cutoff, policy.maxRows])) {
          targets.set(row.room, Math.max(Number(row.through), targets.get(row.room) ?? 0));
        }
        await readEnds([...targets.keys()].filter((room) => !ends.has(room)));
        let deleted = 0;
        for (const [room, target] of targets) {
          const left = policy.maxRows - deleted;
          if (left <= 0) break;
          const end = ends.get(room);
          const through = cutThrough(target, end?.oldest, end?.head, left);
          if (through === undefined) continue;
          const [result] = await conn.query<ResultSetHeader>(
            { sql: DELETE, timeout: STATEMENT_TIMEOUT_MS },
            [room, through],
          );
          deleted += result.affectedRows;
          await conn.query({ sql: NOTE_PRUNED, timeout: STATEMENT_TIMEOUT_MS }, [room, through]);
        }
        return deleted;
      }),
    );
  }

  async pruned(room: string): Promise<number> {
    return this.#unavailableOnError(async () => {
      const [rows] = await withConnection(this.#pool, (conn) =>
        conn.query<PrunedRow[]>(
          {
            sql: 'SELECT pruned_id FROM chat_pruned WHERE room = ?',
            timeout: STATEMENT_TIMEOUT_MS,
          },
          [room],
        ),
      );
      return Number(rows[0]?.pruned_id ?? 0);
    });
  }

  async ping(): Promise<void> {
    await this.#unavailableOnError(() =>
      withConnection(this.#pool, (conn) =>
        conn.query({ sql: 'SELECT 1', timeout: STATEMENT_TIMEOUT_MS }),
      ),
    );
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }

  async #select(sql: string, params: ExecuteValues[]): Promise<Message[]> {
    const [rows] = await withConnection(this.#pool, (conn) =>
      conn.execute<MessageRow[]>({ sql, dateStrings: true, timeout: STATEMENT_TIMEOUT_MS }, params),
    );
    return rows.map(toMessage);
  }

  async #unavailableOnError<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (isUnavailable(error)) {
        throw new StoreUnavailableError(`MySQL cannot be used now: ${errorName(error)}`, {
          cause: error,
        });
      }
      throw error;
    }
  }
}

function errorName(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return typeof code === 'string' ? code : String(message);
}

function toMessage(row: MessageRow): Message {
  return {
    id: row.id,
    room: row.room,
    nickname: row.nickname,
    text: row.text,
    time: fromSqlTime(row.time),
  };
}
