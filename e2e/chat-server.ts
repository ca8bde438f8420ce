/**
 * The real chat server as a child process, for end-to-end tests: the
 * production build (`dist/server/main.js`, serving the built client from
 * `public/`), started on a free port and stopped with SIGTERM like a real
 * deployment, so a restart goes through the graceful shutdown.
 *
 * The database is `DATABASE_URL` when set (the same suite runs on MySQL and
 * on MongoDB), else a fresh SQLite file in a temporary folder. Tests share
 * one server and keep apart by room. On a `mongodb:` URL each server gets a
 * database of its own, `e2e_<random>` on that server, dropped by `close()`:
 * the rooms of an earlier run are not there.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MongoClient } from 'mongodb';
import type { Message } from '../protocol/protocol.ts';
import { launchChat } from '../test/helpers/launch.ts';
import { withDatabase } from '../test/store/mongodb/fixture.ts';

const MAIN = resolve(import.meta.dirname, '../dist/server/main.js');
const READY_TIMEOUT_MS = 20_000;

export class ChatServer {
  #child: ChildProcess | undefined;
  #port = 0;
  #log: string[] = [];
  readonly #databaseUrl: string;
  readonly #tempDir: string | undefined;
  readonly #sqliteFile: string | undefined;
  /** The database of its own on a MongoDB server, dropped by `close()`. */
  readonly #mongoDatabase: string | undefined;

  private constructor(databaseUrl: string | undefined) {
    if (databaseUrl?.startsWith('mongodb')) {
      this.#mongoDatabase = `e2e_${Math.random().toString(36).slice(2, 10)}`;
      // Credentials are still checked where the given URL had them checked.
      this.#databaseUrl = withDatabase(databaseUrl, this.#mongoDatabase);
    } else if (databaseUrl) {
      this.#databaseUrl = databaseUrl;
    } else {
      this.#tempDir = mkdtempSync(join(tmpdir(), 'lpchat-e2e-'));
      this.#sqliteFile = join(this.#tempDir, 'chat.sqlite');
      this.#databaseUrl = `sqlite:${this.#sqliteFile}`;
    }
  }

  /**
   * Starts a server on a free port; later restarts reuse that port and database.
   * @param database `'fresh-sqlite'` for a fresh SQLite file of its own,
   *   whatever `DATABASE_URL` says (a test that deletes the file); otherwise
   *   a URL. @default process.env.DATABASE_URL, else a fresh SQLite file
   */
  static async start(
    database: string | 'fresh-sqlite' | undefined = process.env.DATABASE_URL,
  ): Promise<ChatServer> {
    const server = new ChatServer(database === 'fresh-sqlite' ? undefined : database);
    await server.start();
    return server;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  get running(): boolean {
    return this.#child !== undefined;
  }

  /** The server's log so far, for a failing test's report. */
  get log(): string {
    return this.#log.join('\n');
  }

  /**
   * Starts the process and resolves once it says it listens (its listening
   * signal, test/helpers/launch.ts: no sleeping). If the test runner itself
   * dies, the server does not outlive it.
   */
  async start(): Promise<void> {
    if (this.#child) throw new Error('The chat server is already running');
    const launched = await launchChat({
      command: process.execPath,
      args: [MAIN],
      env: {
        ...process.env,
        PORT: String(this.#port),
        HOST: '127.0.0.1',
        // The tabs suite's insecure context reaches it as chat.test (mapped to
        // 127.0.0.1): a chat on loopback answers only loopback names otherwise.
        ALLOWED_HOSTS: 'localhost,127.0.0.1,chat.test',
        DATABASE_URL: this.#databaseUrl,
        // Short polls: presence and empty answers come round within a test's patience.
        POLL_TIMEOUT_MS: '4000',
        PRESENCE_GRACE_MS: '1000',
        // Each join, rename and leave of a test spends one of a room's tokens
        // (steady-count.ts); the 4 of the default would hold a test's fifth
        // change for 15 s. The spacing has its own tests (test/presence/).
        PRESENCE_CHANGE_BURST: '50',
        // A typist stops counting 3 s after their last POST /typing (5 s by default).
        TYPING_TTL_MS: '3000',
        SEND_RATE: '0',
        SEND_KB_PER_HOUR: '0',
        HISTORY_RATE: '0',
        // Every page of the tests comes from 127.0.0.1: twenty tabs typing would pass the typing limit.
        TYPING_RATE: '0',
        LOG_LEVEL: 'info',
        WORKERS: '1',
      },
      deadlineMs: READY_TIMEOUT_MS,
      onLine: (line) => this.#log.push(line),
    });
    this.#child = launched.child;
    launched.child.once('exit', () => {
      if (this.#child === launched.child) this.#child = undefined;
    });
    this.#port = 'port' in launched.listening ? launched.listening.port : 0;
  }

  /** SIGTERM, as a process manager does, and wait for the process to end. */
  async stop(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /**
   * Deletes the SQLite database, as someone who starts afresh does
   * (`rm data/chat.sqlite`): the next start creates an empty one and ids
   * begin again at 1. Only while stopped, and only for the server's own
   * SQLite file.
   */
  deleteDatabase(): void {
    if (this.#child) throw new Error('Stop the chat server before deleting its database');
    if (!this.#sqliteFile) throw new Error('Only a fresh SQLite database can be deleted');
    for (const suffix of ['', '-wal', '-shm'])
      rmSync(`${this.#sqliteFile}${suffix}`, { force: true });
  }

  /** Stops the server and removes its temporary database. */
  async close(): Promise<void> {
    await this.stop();
    if (this.#tempDir) rmSync(this.#tempDir, { recursive: true, force: true });
    if (this.#mongoDatabase) {
      const client = new MongoClient(this.#databaseUrl);
      try {
        await client.db(this.#mongoDatabase).dropDatabase();
      } finally {
        await client.close();
      }
    }
  }

  /** `POST /send` from outside the browser, e.g. another client or a bot. */
  async send(room: string, text: string, nickname = 'Bot'): Promise<Message> {
    const res = await fetch(`${this.url}/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ room, text, nickname }),
    });
    if (!res.ok) throw new Error(`POST /send: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { message: Message }).message;
  }

  /** Every message of a room, oldest first (for rooms of at most 100 messages). */
  async history(room: string): Promise<Message[]> {
    const res = await fetch(`${this.url}/history?room=${room}&limit=100`);
    if (!res.ok) throw new Error(`GET /history: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { messages: Message[] }).messages;
  }
}
