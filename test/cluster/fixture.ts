/**
 * The set-up every multi-process suite repeats, once: a database the
 * processes share, a Redis (the shared one, a private one the suite may
 * stop, or none), the server processes, and HTTP clients, all torn down
 * after the suite.
 *
 * ```ts
 * const chat = useChatProcesses({ processes: 2, redis: 'shared', env: { POLL_TIMEOUT_MS: '10000' } });
 * it('…', async () => { await chat.clients[0]!.send({ text: 'hi' }); });
 * ```
 *
 * A private Redis is a `redis-server` of this suite's own, on a port of its
 * own, which the suite may stop with SIGSTOP: the shared Redis is never
 * stopped, since other suites run beside this one.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll } from 'vitest';
import { serviceUrl } from '../helpers/env.ts';
import { freePort } from '../helpers/free-port.ts';
import { type ChatClient, chatClient } from '../helpers/http-client.ts';
import {
  type ServerProcess,
  type ServerProcessOptions,
  startServerProcess,
  stopAllServerProcesses,
} from '../helpers/processes.ts';
import {
  createSharedDatabase,
  createSqliteFile,
  type SharedDatabase,
  uniquePrefix,
} from './shared-database.ts';

export interface ChatProcessesOptions {
  /** Server processes, each on a port of its own. @default 1 */
  processes?: number;
  /** `WORKERS` of each. @default 1 */
  workers?: number;
  /** `shared`: REDIS_URL; `private`: a redis-server of the suite's own; `none`: no bus but the store. @default none */
  redis?: 'shared' | 'private' | 'none';
  /** `shared`: MariaDB with MYSQL_URL, else a SQLite file; `sqlite`: a SQLite file. @default shared */
  database?: 'shared' | 'sqlite';
  /** On top of DATABASE_URL, REDIS_URL and REDIS_PREFIX. */
  env?: Record<string, string>;
}

export interface ChatProcesses {
  readonly database: SharedDatabase;
  /** The private Redis, with `redis: 'private'`. */
  readonly redis: RedisServer | undefined;
  /** The environment each process started with. */
  readonly env: Record<string, string>;
  readonly servers: ServerProcess[];
  /** One client per server, in the same order. */
  readonly clients: ChatClient[];
  /** A client of the suite's that is closed after it (a pinned one, say). */
  client(server: ServerProcess, options?: Parameters<typeof chatClient>[1]): ChatClient;
  /** Another process with the suite's environment (stopped after the suite); not added to `servers`. */
  start(options?: Omit<ServerProcessOptions, 'env'>): Promise<ServerProcess>;
}

/** Starts the processes in `beforeAll` and stops everything in `afterAll`. */
export function useChatProcesses(options: ChatProcessesOptions = {}): ChatProcesses {
  const extraClients: ChatClient[] = [];
  let database: SharedDatabase | undefined;
  let redis: RedisServer | undefined;
  let env: Record<string, string> = {};
  const servers: ServerProcess[] = [];
  const clients: ChatClient[] = [];

  beforeAll(async () => {
    database = options.database === 'sqlite' ? createSqliteFile() : await createSharedDatabase();
    if (options.redis === 'private') redis = await startRedisServer();
    const redisUrl = options.redis === 'shared' ? serviceUrl('REDIS_URL') : redis?.url;
    env = {
      DATABASE_URL: database.url,
      ...(redisUrl === undefined ? {} : { REDIS_URL: redisUrl, REDIS_PREFIX: uniquePrefix() }),
      ...options.env,
    };
    // The first creates the schema; the others then start together.
    const count = options.processes ?? 1;
    const start = () => startServerProcess({ env, workers: options.workers ?? 1 });
    servers.push(await start());
    servers.push(...(await Promise.all(Array.from({ length: count - 1 }, start))));
    clients.push(...servers.map((server) => chatClient(server.url, { log: server })));
  }, 60_000);

  afterAll(async () => {
    for (const client of [...clients, ...extraClients]) client.close();
    await stopAllServerProcesses();
    await redis?.stop();
    await database?.drop();
  });

  return {
    get database() {
      if (!database) throw new Error('the database is made in beforeAll');
      return database;
    },
    get redis() {
      return redis;
    },
    get env() {
      return env;
    },
    servers,
    clients,
    client(server, clientOptions) {
      const client = chatClient(server.url, clientOptions);
      extraClients.push(client);
      return client;
    },
    start: (startOptions = {}) =>
      startServerProcess({ workers: options.workers ?? 1, ...startOptions, env }),
  };
}

export interface RedisServer {
  /** `redis://127.0.0.1:PORT` */
  url: string;
  pid: number;
  /** SIGSTOP: the connections stay open, and nothing answers. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A `redis-server` of this suite's own on a free port, without persistence. */
export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  running.add(child);
  const exited = once(child, 'exit').finally(() => running.delete(child));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) resolve();
    });
    exited.then(() => reject(new Error(`redis-server exited before it was ready:\n${output}`)));
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid!,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await exited;
    },
  };
}
