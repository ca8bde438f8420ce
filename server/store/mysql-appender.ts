/**
 * Appends for the MySQL store, grouped per room: the write path.
 *
 * Writers of one room are serialised by the room's counter row (see
 * mysql-store.ts), so a room takes one transaction at a time however many
 * connections wait. Rather than queue 100 sends on that row lock (each
 * holding a pooled connection, then paying its own commit), this process
 * keeps one transaction per room in flight, and the sends that arrive
 * meanwhile go together in the next one: one counter bump for the batch, one
 * multi-row INSERT, one COMMIT. A send alone still goes at once; under load
 * the commit cost is shared. Every send in a batch is acknowledged only
 * after that batch commits, and a failed batch fails each of its sends.
 *
 * Idempotency keys are checked inside the transaction, after the counter row
 * is locked, so no other writer of the room can add the same key meanwhile.
 */
import type { Pool, PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { isUnavailable, STATEMENT_TIMEOUT_MS, withConnection } from './mysql-connection.ts';
import type { AppendResult, Message, NewMessage } from './store.ts';

/** Sends per transaction, at most. */
const MAX_BATCH = 200;

/**
 * How long a transaction waits for its room's row lock, in seconds (the
 * server's default is 50). The lock is normally held for a few milliseconds;
 * a holder that is gone (a client cut off by a network partition, whose
 * session the server has not yet noticed is dead) must cost a 503, not pin
 * pooled connections for most of a minute.
 */
const LOCK_WAIT_S = 5;

const BUMP = `INSERT INTO chat_rooms (room, last_id) VALUES (?, LAST_INSERT_ID(?))
  ON DUPLICATE KEY UPDATE last_id = LAST_INSERT_ID(last_id + ?)`;
const SET_LAST = 'UPDATE chat_rooms SET last_id = ? WHERE room = ?';
const INSERT = 'INSERT INTO chat_messages (room, id, nickname, text, time, `key`) VALUES ?';
const BY_KEYS =
  'SELECT id, room, nickname, text, time, `key` FROM chat_messages WHERE room = ? AND `key` IN (?)';

interface Pending {
  input: NewMessage;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

interface KeyRow extends RowDataPacket {
  id: number;
  room: string;
  nickname: string;
  text: string;
  time: string;
  key: string;
}

export class MysqlAppender {
  readonly #pool: Pool;
  /** Sends waiting for their room's transaction in flight to finish. */
  readonly #waiting = new Map<string, Pending[]>();
  /**
   * Connections whose session settings are made, once each. Keyed by the
   * underlying connection: mysql2/promise wraps it anew on every checkout.
   */
  readonly #configured = new WeakSet<object>();

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  append(input: NewMessage): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      const queue = this.#waiting.get(input.room);
      if (queue) {
        queue.push({ input, resolve, reject });
        return;
      }
      this.#waiting.set(input.room, [{ input, resolve, reject }]);
      void this.#drain(input.room);
    });
  }

  /** Writes the room's waiting sends, a batch at a time, until none wait. */
  async #drain(room: string): Promise<void> {
    const queue = this.#waiting.get(room)!;
    while (queue.length > 0) {
      const batch = queue.splice(0, MAX_BATCH);
      try {
        settle(batch, await this.#write(room, batch));
      } catch (error) {
        if (batch.length === 1 || isUnavailable(error)) {
          for (const pending of batch) pending.reject(error);
          continue;
        }
        // One bad send must not fail the others: write them one by one.
        for (const pending of batch) {
          await this.#write(room, [pending]).then(
            (results) => settle([pending], results),
            pending.reject,
          );
        }
      }
    }
    this.#waiting.delete(room);
  }

  #write(room: string, batch: Pending[]): Promise<AppendResult[]> {
    return withConnection(this.#pool, async (conn) => {
      if (!this.#configured.has(conn.connection)) {
        await conn.query(statement(`SET SESSION innodb_lock_wait_timeout = ${LOCK_WAIT_S}`));
        this.#configured.add(conn.connection);
      }
      await conn.query(statement('START TRANSACTION'));
      return this.#writeIn(conn, room, batch);
    });
  }

  async #writeIn(conn: PoolConnection, room: string, batch: Pending[]): Promise<AppendResult[]> {
    // Take ids for the whole batch; this locks the room's row until COMMIT.
    const n = batch.length;
    const [bumped] = await conn.execute<ResultSetHeader>(statement(BUMP), [room, n, n]);
    const first = bumped.insertId - n + 1;

    const seen = await this.#firstByKey(conn, room, batch);
    const time = new Date().toISOString();
    const results: AppendResult[] = [];
    const rows: unknown[][] = [];
    for (const { input } of batch) {
      const earlier = input.key === undefined ? undefined : seen.get(input.key);
      if (earlier) {
        results.push({ message: earlier, created: false });
        continue;
      }
      const message: Message = {
        id: first + rows.length,
        room,
        nickname: input.nickname,
        text: input.text,
        time,
      };
      // A key repeated within this batch: its later sends get this message.
      if (input.key !== undefined) seen.set(input.key, message);
      rows.push([
        room,
        message.id,
        message.nickname,
        message.text,
        toSqlTime(time),
        input.key ?? null,
      ]);
      results.push({ message, created: true });
    }

    if (rows.length === 0) {
      await conn.query(statement('ROLLBACK')); // Every send repeated a key: give the ids back.
      return results;
    }
    // Give back the ids of sends that repeated a key: ids stay dense.
    if (rows.length < n) await conn.execute(statement(SET_LAST), [first + rows.length - 1, room]);
    await conn.query(statement(INSERT), [rows]);
    await conn.query(statement('COMMIT'));
    return results;
  }

  /**
   * The stored messages of this batch's keys, by key. Read after the room row is
   * locked, and this is the transaction's first plain read (InnoDB takes its
   * snapshot then), so it sees every key any writer of the room committed.
   */
  async #firstByKey(
    conn: PoolConnection,
    room: string,
    batch: Pending[],
  ): Promise<Map<string, Message>> {
    const keys = [
      ...new Set(batch.flatMap(({ input }) => (input.key === undefined ? [] : [input.key]))),
    ];
    const found = new Map<string, Message>();
    if (keys.length === 0) return found;
    const [rows] = await conn.query<KeyRow[]>({ ...statement(BY_KEYS), dateStrings: true }, [
      room,
      keys,
    ]);
    for (const row of rows) {
      found.set(row.key, {
        id: row.id,
        room: row.room,
        nickname: row.nickname,
        text: row.text,
        time: fromSqlTime(row.time),
      });
    }
    return found;
  }
}

/** Every statement of a transaction is bounded: see `STATEMENT_TIMEOUT_MS`. */
function statement(sql: string): { sql: string; timeout: number } {
  return { sql, timeout: STATEMENT_TIMEOUT_MS };
}

function settle(batch: Pending[], results: AppendResult[]): void {
  for (const [i, pending] of batch.entries()) pending.resolve(results[i]!);
}

/** `2026-11-30T03:20:19.123Z` → `2026-11-30 03:20:19.123` (DATETIME(3), UTC). */
export function toSqlTime(iso: string): string {
  return iso.slice(0, 23).replace('T', ' ');
}

/**
 * `2026-11-30 03:20:19.123` (read with `dateStrings`, so no timezone applies) → ISO 8601.
 *
 * mysql2's binary protocol (`execute`) drops a zero fraction ("…:35", not
 * "…:35.000"), which would make a message read back differ from the one
 * appended and published. Those two shapes, the only ones a `DATETIME(3)`
 * column gives, are rewritten as strings; anything else goes through Date.
 * Why: a `/history` page is 50 rows, and the Date round trip was the
 * largest entry in its profile on MySQL (the bench reports).
 */
export function fromSqlTime(sql: string): string {
  if (sql[10] === ' ' && SQL_TIME.test(sql)) {
    return `${sql.slice(0, 10)}T${sql.slice(11)}${sql.length === 19 ? '.000Z' : 'Z'}`;
  }
  return new Date(`${sql.replace(' ', 'T')}Z`).toISOString();
}

const SQL_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{3})?$/;
