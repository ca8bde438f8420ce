/**
 * Configuration: the only module that reads `process.env`.
 *
 * The environment is read once into a typed object, every bad value is
 * reported at once (not the first one only), and the result is frozen.
 * Everything else takes a `Config` (or a part of one) as an argument, so
 * tests build their own without touching the environment.
 */
import { cpus } from 'node:os';

export interface Config {
  /** TCP port, or a pipe/socket path (IIS hands Node a named pipe). @default 3000 */
  port: number | string;
  /** Interface to bind when `port` is a TCP port. @default all interfaces */
  host: string | undefined;
  /** Store by scheme: `sqlite:<file>`, `mysql://…`, `mongodb://…`, `memory:`. @default sqlite:data/chat.sqlite */
  databaseUrl: string;
  /** Turns on the Redis bus when set. */
  redisUrl: string | undefined;
  /** Prefix of the Redis channels and keys, so several chats can share one Redis. @default lpchat */
  redisPrefix: string;
  /** Number of cluster workers; `auto` is the number of cores. @default 1 */
  workers: number;
  /** How long a `GET /recv` is held before its empty answer. @default 25000 */
  pollTimeoutMs: number;
  /** How long past the poll timeout a client still counts as online. @default 5000 */
  presenceGraceMs: number;
  /** Waiting polls one process holds at most; past it `/recv` answers 503. @default 50000 */
  maxWaiters: number;
  /** Waiting polls one client address may hold; past it `/recv` answers 429. @default 100 */
  maxPollsPerAddress: number;
  /** Rooms the message log holds in memory, least recently used dropped first. @default 10000 */
  maxRooms: number;
  /** A room with no waiting poll and no message for this long is dropped from memory. @default 30000 */
  roomIdleMs: number;
  /** How often a process looks in the store for messages no bus brought (no bus, or the bus down). @default 1000 */
  storePollMs: number;
  /** How soon waiting polls hear that their room's online count changed; 0 turns it off. @default 3000 */
  presenceNotifyMs: number;
  /** Sends per second allowed per client address; 0 turns the limit off. @default 5 */
  sendRatePerSec: number;
  /** Sends a client may make in a burst above the rate. @default 20 */
  sendBurst: number;
  /** Express `trust proxy`: `false`, `true`, a hop count or a list of addresses. @default false */
  trustProxy: boolean | number | string;
  /** Other origins allowed to `POST /send` (comma separated). @default none */
  allowedOrigins: string[];
  /** Serve `public/` from Node (IIS serves it itself and may turn this off). @default true */
  serveStatic: boolean;
  /** Folder of the built client. @default public */
  staticDir: string;
  /** Milliseconds a store call may take before the send is answered 503. @default 2000 */
  storeTimeoutMs: number;
  /** `error`, `warn`, `info` or `debug`. @default info */
  logLevel: 'error' | 'warn' | 'info' | 'debug';
}

export const defaults: Config = Object.freeze({
  port: 3000,
  host: undefined,
  databaseUrl: 'sqlite:data/chat.sqlite',
  redisUrl: undefined,
  redisPrefix: 'lpchat',
  workers: 1,
  pollTimeoutMs: 25_000,
  presenceGraceMs: 5_000,
  maxWaiters: 50_000,
  maxPollsPerAddress: 100,
  maxRooms: 10_000,
  roomIdleMs: 30_000,
  storePollMs: 1_000,
  presenceNotifyMs: 3_000,
  sendRatePerSec: 5,
  sendBurst: 20,
  trustProxy: false,
  allowedOrigins: [],
  serveStatic: true,
  staticDir: 'public',
  storeTimeoutMs: 2_000,
  logLevel: 'info',
});

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Reads and validates `env` (default `process.env`); throws a `ConfigError` listing every problem. */
export function loadConfig(env: Env = process.env): Readonly<Config> {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === '' ? undefined : value;
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return value;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = read(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
    if (['0', 'false', 'no', 'off'].includes(raw)) return false;
    problems.push(`${name} must be true or false, got "${raw}"`);
    return fallback;
  };

  const config: Config = {
    ...defaults,
    port: parsePort(read('PORT'), problems),
    host: read('HOST'),
    databaseUrl: read('DATABASE_URL') ?? defaults.databaseUrl,
    redisUrl: read('REDIS_URL'),
    redisPrefix: read('REDIS_PREFIX') ?? defaults.redisPrefix,
    workers: parseWorkers(read('WORKERS'), problems),
    pollTimeoutMs: int('POLL_TIMEOUT_MS', defaults.pollTimeoutMs, 100, 600_000),
    presenceGraceMs: int('PRESENCE_GRACE_MS', defaults.presenceGraceMs, 0, 600_000),
    maxWaiters: int('MAX_WAITERS', defaults.maxWaiters, 1, 10_000_000),
    maxPollsPerAddress: int('MAX_POLLS_PER_ADDRESS', defaults.maxPollsPerAddress, 1, 10_000_000),
    maxRooms: int('MAX_ROOMS', defaults.maxRooms, 1, 10_000_000),
    roomIdleMs: int('ROOM_IDLE_MS', defaults.roomIdleMs, 1_000, 3_600_000),
    storePollMs: int('STORE_POLL_MS', defaults.storePollMs, 50, 60_000),
    presenceNotifyMs: int('PRESENCE_NOTIFY_MS', defaults.presenceNotifyMs, 0, 600_000),
    sendRatePerSec: int('SEND_RATE', defaults.sendRatePerSec, 0, 1_000_000),
    sendBurst: int('SEND_BURST', defaults.sendBurst, 1, 1_000_000),
    trustProxy: parseTrustProxy(read('TRUST_PROXY')),
    allowedOrigins: (read('ALLOWED_ORIGINS') ?? '')
      .split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
    serveStatic: bool('SERVE_STATIC', defaults.serveStatic),
    staticDir: read('STATIC_DIR') ?? defaults.staticDir,
    storeTimeoutMs: int('STORE_TIMEOUT_MS', defaults.storeTimeoutMs, 50, 60_000),
    logLevel: parseLogLevel(read('LOG_LEVEL'), problems),
  };

  if (!/^(sqlite:|mysql:\/\/|mongodb(\+srv)?:\/\/|memory:)/.test(config.databaseUrl)) {
    problems.push(
      `DATABASE_URL must start with sqlite:, mysql://, mongodb:// or memory:, got "${config.databaseUrl}"`,
    );
  }
  if (config.redisUrl !== undefined && !/^rediss?:\/\//.test(config.redisUrl)) {
    problems.push(`REDIS_URL must start with redis:// or rediss://, got "${config.redisUrl}"`);
  }
  for (const origin of config.allowedOrigins) {
    if (!URL.canParse(origin)) problems.push(`ALLOWED_ORIGINS has a bad origin "${origin}"`);
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

function parsePort(raw: string | undefined, problems: string[]): number | string {
  if (raw === undefined) return defaults.port;
  if (/^\d+$/.test(raw)) {
    const port = Number(raw);
    if (port <= 65_535) return port;
    problems.push(`PORT must be a TCP port (0-65535) or a pipe/socket path, got "${raw}"`);
    return defaults.port;
  }
  // Anything else is a path: a Windows named pipe (\\.\pipe\…) or a Unix socket.
  return raw;
}

function parseWorkers(raw: string | undefined, problems: string[]): number {
  if (raw === undefined) return 1;
  if (raw === 'auto') return Math.max(1, cpus().length);
  const workers = Number(raw);
  if (Number.isInteger(workers) && workers >= 1 && workers <= 256) return workers;
  problems.push(`WORKERS must be "auto" or an integer from 1 to 256, got "${raw}"`);
  return 1;
}

function parseTrustProxy(raw: string | undefined): boolean | number | string {
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw; // "loopback", "10.0.0.0/8, 127.0.0.1": Express parses these itself.
}

function parseLogLevel(raw: string | undefined, problems: string[]): Config['logLevel'] {
  if (raw === undefined) return defaults.logLevel;
  if (raw === 'error' || raw === 'warn' || raw === 'info' || raw === 'debug') return raw;
  problems.push(`LOG_LEVEL must be error, warn, info or debug, got "${raw}"`);
  return defaults.logLevel;
}
