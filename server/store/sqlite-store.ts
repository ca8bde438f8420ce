/**
 * The SQLite store (better-sqlite3): the default, one file under `data/`.
 *
 * Ordering: every append runs in a `BEGIN IMMEDIATE` transaction, which takes
 * SQLite's single write lock before it reads the room's last id. Writers, in
 * this process or in other cluster workers, therefore allocate ids and commit
 * one at a time, so commit order is id order and a reader can never see id
 * n+1 before id n. better-sqlite3 is synchronous: a write blocks the event
 * loop for its few microseconds (plus the fsync), which is cheaper here than
 * a thread hop.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import {
  type AppendResult,
  type Message,
  type MessageStore,
  type NewMessage,
  StoreUnavailableError,
} from './store.ts';

/** Schema versions, applied in order; `PRAGMA user_version` records the last one applied. */
const migrations: string[] = [
  `CREATE TABLE messages (
     room     TEXT    NOT NULL,
     id       INTEGER NOT NULL,
     nickname TEXT    NOT NULL,
     text     TEXT    NOT NULL,
     time     TEXT    NOT NULL,
     key      TEXT,
     PRIMARY KEY (room, id)
   ) WITHOUT ROWID;
   CREATE UNIQUE INDEX messages_room_key ON messages (room, key) WHERE key IS NOT NULL;`,
];

type Row = Message;

export interface SqliteStoreOptions {
  /** `PRAGMA synchronous`: FULL (default) fsyncs every commit, so an acknowledged message survives a power cut. */
  synchronous?: 'FULL' | 'NORMAL';
}

export class SqliteStore implements MessageStore {
  readonly kind = 'sqlite';
  readonly #db: Database.Database;
  #append!: (input: NewMessage) => AppendResult;
  #after!: Database.Statement<[string, number, number], Row>;
  #before!: Database.Statement<[string, number, number], Row>;
  #head!: Database.Statement<[string], { head: number | null }>;
  #dataVersion = -1;

  /** `file` is a path, or `:memory:`. */
  constructor(file: string, options: SqliteStoreOptions = {}) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.#db = new Database(file);
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    // Other workers may hold the write lock for a moment: wait for it rather than fail.
    this.#db.pragma('busy_timeout = 5000');
  }

  async init(): Promise<void> {
    this.#unavailableOnError(() => this.#migrate());
    const byKey = this.#db.prepare<[string, string], Row>(
      'SELECT id, room, nickname, text, time FROM messages WHERE room = ? AND key = ?',
    );
    const lastId = this.#db.prepare<[string], { last: number }>(
      'SELECT COALESCE(MAX(id), 0) AS last FROM messages WHERE room = ?',
    );
    const insert = this.#db.prepare<[string, number, string, string, string, string | null]>(
      'INSERT INTO messages (room, id, nickname, text, time, key) VALUES (?, ?, ?, ?, ?, ?)',
    );
    const append = this.#db.transaction((input: NewMessage): AppendResult => {
      if (input.key !== undefined) {
        const seen = byKey.get(input.room, input.key);
        if (seen) return { message: seen, created: false };
      }
      const id = (lastId.get(input.room)?.last ?? 0) + 1;
      const time = new Date().toISOString();
      insert.run(input.room, id, input.nickname, input.text, time, input.key ?? null);
      return {
        message: { id, room: input.room, nickname: input.nickname, text: input.text, time },
        created: true,
      };
    });
    this.#append = (input) => append.immediate(input);
    this.#after = this.#db.prepare(
      'SELECT id, room, nickname, text, time FROM messages WHERE room = ? AND id > ? ORDER BY id LIMIT ?',
    );
    this.#head = this.#db.prepare('SELECT MAX(id) AS head FROM messages WHERE room = ?');
    this.#before = this.#db.prepare(
      `SELECT * FROM (
         SELECT id, room, nickname, text, time FROM messages
         WHERE room = ? AND id < ? ORDER BY id DESC LIMIT ?
       ) ORDER BY id`,
    );
  }

  async append(input: NewMessage): Promise<AppendResult> {
    return this.#unavailableOnError(() => this.#append(input));
  }

  async after(room: string, since: number, limit: number): Promise<Message[]> {
    return this.#unavailableOnError(() => this.#after.all(room, since, limit));
  }

  async before(room: string, before: number | undefined, limit: number): Promise<Message[]> {
    return this.#unavailableOnError(() =>
      this.#before.all(room, before ?? Number.MAX_SAFE_INTEGER, limit),
    );
  }

  async heads(rooms: readonly string[]): Promise<Map<string, number>> {
    return this.#unavailableOnError(() => {
      const heads = new Map<string, number>();
      // One index seek per room on the (room, id) primary key.
      for (const room of rooms) {
        const head = this.#head.get(room)?.head;
        if (head) heads.set(room, head);
      }
      return heads;
    });
  }

  /**
   * `PRAGMA data_version` changes when another connection (another process on
   * the same file) commits, and not for this connection's own writes, which
   * reach the message log directly: an unchanged value means nothing to look for.
   */
  othersWrote(): boolean {
    try {
      const version = this.#db.pragma('data_version', { simple: true }) as number;
      const changed = version !== this.#dataVersion;
      this.#dataVersion = version;
      return changed;
    } catch {
      return true;
    }
  }

  async ping(): Promise<void> {
    this.#unavailableOnError(() => this.#db.prepare('SELECT 1').get());
  }

  async close(): Promise<void> {
    if (this.#db.open) this.#db.close();
  }

  #migrate(): void {
    // IMMEDIATE takes the write lock first, so two processes starting at once
    // apply each migration exactly once: the second waits, then sees the new version.
    this.#db
      .transaction(() => {
        const version = this.#db.pragma('user_version', { simple: true }) as number;
        for (const [index, sql] of migrations.entries()) {
          if (index < version) continue;
          this.#db.exec(sql);
        }
        this.#db.pragma(`user_version = ${migrations.length}`);
      })
      .immediate();
  }

  /** Busy or I/O errors mean the database cannot take the write now: a 503, not a 500. */
  #unavailableOnError<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (
        typeof code === 'string' &&
        /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY)/.test(code)
      ) {
        throw new StoreUnavailableError(`SQLite cannot be used now: ${code}`, { cause: error });
      }
      if (!this.#db.open) throw new StoreUnavailableError('SQLite is closed', { cause: error });
      throw error;
    }
  }
}
