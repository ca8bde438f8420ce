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
  /**
   * Redis counts as down when a command or the heartbeat gets no answer
   * within this: the bus is down, and the send limit and presence count in
   * this process, until it answers again. @default 500
   */
  redisTimeoutMs: number;
  /** Number of cluster workers; `auto` is the number of cores. @default 1 */
  workers: number;
  /** How long a `GET /recv` is held before its empty answer. @default 25000 */
  pollTimeoutMs: number;
  /** How long past the poll timeout a client still counts as online. @default 5000 */
  presenceGraceMs: number;
  /**
   * With WORKERS or REDIS_URL: how long the last online count shared across
   * processes is still shown while the primary or Redis does not answer;
   * past it each process counts only its own clients. @default 10000
   */
  presenceStaleMs: number;
  /** Waiting polls one process holds at most; past it `/recv` answers 503. @default 50000 */
  maxWaiters: number;
  /** Waiting polls one client address may hold; past it `/recv` answers 429. 0 turns the limit off. @default 100 */
  maxPollsPerAddress: number;
  /**
   * Unanswered requests one connection may hold (HTTP/1.1 pipelining); past
   * it, and behind a long-poll, a request is refused and the connection
   * closes (server/net/pipelining.ts). @default 16
   */
  maxPipelined: number;
  /** Open connections one client address may hold (trusted proxies exempt); 0 turns the limit off. @default 256 */
  maxConnectionsPerAddress: number;
  /** Idle keep-alive connections one client address may hold; past it the oldest is closed. 0 turns it off. @default 32 */
  maxIdlePerAddress: number;
  /** Open connections this process holds at most; undefined: the descriptor limit less a reserve. @default auto */
  maxConnections: number | undefined;
  /** An idle keep-alive connection is closed after this; above the proxies' upstream keep-alive (nginx 60 s). @default 65000 */
  keepAliveTimeoutMs: number;
  /** Client ids one address may have counted in the online count at once; 0 turns the cap off. @default 100 */
  presenceClientsPerAddress: number;
  /** Changes of a room's online count shown in a row before they are spaced by `presenceChangeMs`. @default 4 */
  presenceChangeBurst: number;
  /** Past the burst, a room's online count changes at most once per this. @default 15000 */
  presenceChangeMs: number;
  /** Rooms the message log holds in memory; past it the least recently used is dropped. @default 10000 */
  maxRooms: number;
  /** A room with no waiting poll and no message for this long is dropped from memory. @default 30000 */
  roomIdleMs: number;
  /** How often a process reads the store for messages it was not told about (bus down, or no bus). @default 1000 */
  storePollMs: number;
  /** How soon waiting polls hear that their room's online count changed; 0 turns it off. @default 3000 */
  presenceNotifyMs: number;
  /**
   * Sends per second allowed per client address, on average; 0 turns the limit off.
   * The limit is a window of `sendBurst / sendRatePerSec` seconds (at least 1 s)
   * holding `sendBurst` sends (`rateLimitWindow`). @default 5
   */
  sendRatePerSec: number;
  /** Sends one address may make in one window. @default 20 */
  sendBurst: number;
  /**
   * `POST /typing` per second allowed per client address, on average, a
   * budget apart from the send limit's; 0 turns the limit off. The window
   * holds `typingBurst` (`rateLimitWindow`). A page sends one every 2.5 s at
   * most while its person types, so the default leaves room for the people
   * behind one address (an office, a NAT). @default 2
   */
  typingRatePerSec: number;
  /** `POST /typing` one address may make in one window. @default 20 */
  typingBurst: number;
  /**
   * `GET /history` per second allowed per client address, on average, a
   * budget of its own; 0 turns the limit off. A page asks for one page when
   * it opens and one per scroll to the top, so the burst leaves room for
   * several people behind one address. @default 5
   */
  historyRatePerSec: number;
  /** `GET /history` one address may make in one window. @default 50 */
  historyBurst: number;
  /** A room's waiting polls are woken for typing at most this often (ms). @default 2500 */
  typingWakeMs: number;
  /** Someone counts as typing this long after their last `POST /typing` (ms). @default 5000 */
  typingTtlMs: number;
  /**
   * Typists one client address may have in one room at once: a new `client`
   * id from an address already at it types unseen until one of its typists
   * stops or expires, so one address cannot fill a room's typing line. 0: no cap.
   * @default 2
   */
  typistsPerAddress: number;
  /**
   * The key of the tags the answers name typists by (server/presence/tag.ts)
   * in place of their client ids. Processes that serve the same rooms must
   * share it: the cluster primary sets one for its workers when it is
   * unset; servers on several machines (Redis) need it set alike.
   * @default undefined: a random key per process (per primary with WORKERS)
   */
  presenceTagSecret: string | undefined;
  /**
   * Names from one client address a room's list shows at most; the rest
   * are counted in `more`, so many client ids from one address cannot push
   * everyone else out of the list. 0: no cap. @default 3
   */
  peopleListedPerAddress: number;
  /** Express `trust proxy`: `false`, `true`, a hop count or a list of addresses. @default false */
  trustProxy: boolean | number | string;
  /**
   * Bytes of `X-Forwarded-For` read, from its right end (where the trusted
   * proxies append): a longer header's start, written by the client, is
   * never parsed (server/core/client-address.ts). @default 1024
   */
  forwardedForMaxBytes: number;
  /** Other origins allowed to `POST /send` (comma separated). @default none */
  allowedOrigins: string[];
  /** Serve `public/` from Node (IIS serves it itself and may turn this off). @default true */
  serveStatic: boolean;
  /** Folder of the built client. @default public */
  staticDir: string;
  /**
   * Milliseconds a store call may take before its request is answered 503
   * (a send, a catch-up, `/history`, `/health`). SQLite's writer also waits
   * for the file's write lock only this long. @default 2000
   */
  storeTimeoutMs: number;
  /**
   * After a send's write fails (or outlasts `storeTimeoutMs`), `GET /health`
   * answers 503 until a write succeeds, or until this long has passed with
   * no new failure: a balancer that took the process out of service lets it
   * try again. @default 30000
   */
  healthWriteWindowMs: number;
  /**
   * The SQLite file stops growing at this many MiB: sends then get 503, as on
   * a full disk, until retention frees pages (SQLite reuses them). Undefined
   * (`SQLITE_MAX_MB=0`): unlimited. @default 1024
   */
  sqliteMaxMb: number | undefined;
  /** Messages older than this many days are deleted (each room's newest kept); 0 keeps them by age. @default 30 */
  retentionDays: number;
  /** A room keeps its newest this many messages; 0: no bound by count. @default 10000 */
  retentionPerRoom: number;
  /** How often retention runs, in ms. @default 60000 */
  retentionIntervalMs: number;
  /** Rows one retention run deletes at most, so a run stays short for the database. @default 5000 */
  retentionBatch: number;
  /**
   * KiB of message text (and nickname) one client address may have stored
   * per hour, beside the send rate: long messages at the send rate would
   * fill a disk a message count never notices. 0 turns it off. @default 1024
   */
  sendKbPerHour: number;
  /**
   * Milliseconds the event loop may wait, at the end of a turn, for the SQLite
   * writes it made, to acknowledge them in that turn; none is waited for after
   * a wait ran out, nor after a write that ran longer in the worker.
   * 0 never waits. @default 1
   */
  sqliteWaitMs: number;
  /** `error`, `warn`, `info` or `debug`. @default info */
  logLevel: 'error' | 'warn' | 'info' | 'debug';
  /** `json` or `pretty` (log-format.ts); undefined: pretty on a terminal, json otherwise. @default undefined */
  logFormat: 'json' | 'pretty' | undefined;
  /** Serve Prometheus metrics (`GET /metrics`). @default true */
  metrics: boolean;
  /** Serve the metrics on this port instead of the chat's (the cluster primary listens on it). @default the chat's port */
  metricsPort: number | undefined;
  /** Interface `METRICS_PORT` binds (`127.0.0.1` keeps it on the machine). @default HOST */
  metricsHost: string | undefined;
  /** Host names requests may name (`Host`, or `X-Forwarded-Host` from a trusted proxy); empty: any. @default any */
  allowedHosts: string[];
  /**
   * A request must have arrived whole, headers and body, within this
   * (Node's `server.requestTimeout`); a slower upload is cut with 408. A
   * long-poll is not concerned: its request has arrived before it waits. @default 15000
   */
  bodyTimeoutMs: number;
  /** The request headers must have arrived within this (Node's `server.headersTimeout`). @default 10000 */
  headersTimeoutMs: number;
  /**
   * On SIGTERM, how long the chat goes on serving with `GET /ready` (and
   * `/health`) answering 503 `draining` before it stops accepting: the time
   * a load balancer needs to see that and send nothing new. @default 0
   */
  shutdownDrainMs: number;
}

export const defaults: Config = Object.freeze({
  port: 3000,
  host: undefined,
  databaseUrl: 'sqlite:data/chat.sqlite',
  redisUrl: undefined,
  redisPrefix: 'lpchat',
  redisTimeoutMs: 500,
  workers: 1,
  pollTimeoutMs: 25_000,
  presenceGraceMs: 5_000,
  presenceStaleMs: 10_000,
  maxWaiters: 50_000,
  maxPollsPerAddress: 100,
  maxPipelined: 16,
  maxConnectionsPerAddress: 256,
  maxIdlePerAddress: 32,
  maxConnections: undefined,
  keepAliveTimeoutMs: 65_000,
  presenceClientsPerAddress: 100,
  presenceChangeBurst: 4,
  presenceChangeMs: 15_000,
  maxRooms: 10_000,
  roomIdleMs: 30_000,
  storePollMs: 1_000,
  presenceNotifyMs: 3_000,
  sendRatePerSec: 5,
  sendBurst: 20,
  typingRatePerSec: 2,
  typingBurst: 20,
  historyRatePerSec: 5,
  historyBurst: 50,
  typingWakeMs: 2_500,
  typingTtlMs: 5_000,
  typistsPerAddress: 2,
  presenceTagSecret: undefined,
  peopleListedPerAddress: 3,
  trustProxy: false,
  forwardedForMaxBytes: 1_024,
  allowedOrigins: [],
  serveStatic: true,
  staticDir: 'public',
  storeTimeoutMs: 2_000,
  healthWriteWindowMs: 30_000,
  sqliteMaxMb: 1024,
  retentionDays: 30,
  retentionPerRoom: 10_000,
  retentionIntervalMs: 60_000,
  retentionBatch: 5_000,
  sendKbPerHour: 1024,
  sqliteWaitMs: 1,
  logLevel: 'info',
  logFormat: undefined,
  metrics: true,
  metricsPort: undefined,
  metricsHost: undefined,
  allowedHosts: [],
  bodyTimeoutMs: 15_000,
  headersTimeoutMs: 10_000,
  shutdownDrainMs: 0,
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
    redisTimeoutMs: int('REDIS_TIMEOUT_MS', defaults.redisTimeoutMs, 10, 60_000),
    workers: parseWorkers(read('WORKERS'), problems),
    pollTimeoutMs: int('POLL_TIMEOUT_MS', defaults.pollTimeoutMs, 100, 600_000),
    presenceGraceMs: int('PRESENCE_GRACE_MS', defaults.presenceGraceMs, 0, 600_000),
    presenceStaleMs: int('PRESENCE_STALE_MS', defaults.presenceStaleMs, 100, 600_000),
    maxWaiters: int('MAX_WAITERS', defaults.maxWaiters, 1, 10_000_000),
    maxPollsPerAddress: int('MAX_POLLS_PER_ADDRESS', defaults.maxPollsPerAddress, 0, 10_000_000),
    maxPipelined: int('MAX_PIPELINED', defaults.maxPipelined, 1, 1_000),
    maxConnectionsPerAddress: int(
      'MAX_CONNECTIONS_PER_ADDRESS',
      defaults.maxConnectionsPerAddress,
      0,
      10_000_000,
    ),
    maxIdlePerAddress: int('MAX_IDLE_PER_ADDRESS', defaults.maxIdlePerAddress, 0, 10_000_000),
    maxConnections:
      read('MAX_CONNECTIONS') === undefined || read('MAX_CONNECTIONS') === 'auto'
        ? undefined
        : int('MAX_CONNECTIONS', 0, 1, 10_000_000),
    keepAliveTimeoutMs: int('KEEP_ALIVE_TIMEOUT_MS', defaults.keepAliveTimeoutMs, 1_000, 600_000),
    presenceClientsPerAddress: int(
      'PRESENCE_CLIENTS_PER_ADDRESS',
      defaults.presenceClientsPerAddress,
      0,
      10_000_000,
    ),
    presenceChangeBurst: int('PRESENCE_CHANGE_BURST', defaults.presenceChangeBurst, 1, 1_000),
    presenceChangeMs: int('PRESENCE_CHANGE_MS', defaults.presenceChangeMs, 0, 600_000),
    maxRooms: int('MAX_ROOMS', defaults.maxRooms, 1, 10_000_000),
    roomIdleMs: int('ROOM_IDLE_MS', defaults.roomIdleMs, 1_000, 86_400_000),
    storePollMs: int('STORE_POLL_MS', defaults.storePollMs, 50, 60_000),
    presenceNotifyMs: int('PRESENCE_NOTIFY_MS', defaults.presenceNotifyMs, 0, 600_000),
    sendRatePerSec: int('SEND_RATE', defaults.sendRatePerSec, 0, 1_000_000),
    sendBurst: int('SEND_BURST', defaults.sendBurst, 1, 1_000_000),
    typingRatePerSec: int('TYPING_RATE', defaults.typingRatePerSec, 0, 1_000_000),
    typingBurst: int('TYPING_BURST', defaults.typingBurst, 1, 1_000_000),
    historyRatePerSec: int('HISTORY_RATE', defaults.historyRatePerSec, 0, 1_000_000),
    historyBurst: int('HISTORY_BURST', defaults.historyBurst, 1, 1_000_000),
    typingWakeMs: int('TYPING_WAKE_MS', defaults.typingWakeMs, 100, 60_000),
    typingTtlMs: int('TYPING_TTL_MS', defaults.typingTtlMs, 100, 60_000),
    typistsPerAddress: int('TYPISTS_PER_ADDRESS', defaults.typistsPerAddress, 0, 1_000_000),
    presenceTagSecret: read('PRESENCE_TAG_SECRET') || undefined,
    peopleListedPerAddress: int(
      'PEOPLE_LISTED_PER_ADDRESS',
      defaults.peopleListedPerAddress,
      0,
      50,
    ),
    trustProxy: parseTrustProxy(read('TRUST_PROXY')),
    forwardedForMaxBytes: int('FORWARDED_FOR_MAX_BYTES', defaults.forwardedForMaxBytes, 64, 16_384),
    allowedOrigins: (read('ALLOWED_ORIGINS') ?? '')
      .split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
    serveStatic: bool('SERVE_STATIC', defaults.serveStatic),
    staticDir: read('STATIC_DIR') ?? defaults.staticDir,
    storeTimeoutMs: int('STORE_TIMEOUT_MS', defaults.storeTimeoutMs, 50, 60_000),
    healthWriteWindowMs: int(
      'HEALTH_WRITE_WINDOW_MS',
      defaults.healthWriteWindowMs,
      1_000,
      86_400_000,
    ),
    sqliteMaxMb: int('SQLITE_MAX_MB', defaults.sqliteMaxMb ?? 0, 0, 16_000_000) || undefined,
    retentionDays: int('RETENTION_DAYS', defaults.retentionDays, 0, 36_500),
    retentionPerRoom: int('RETENTION_PER_ROOM', defaults.retentionPerRoom, 0, 1_000_000_000),
    retentionIntervalMs: int(
      'RETENTION_INTERVAL_MS',
      defaults.retentionIntervalMs,
      100,
      86_400_000,
    ),
    retentionBatch: int('RETENTION_BATCH', defaults.retentionBatch, 1, 1_000_000),
    sendKbPerHour: int('SEND_KB_PER_HOUR', defaults.sendKbPerHour, 0, 1_000_000_000),
    sqliteWaitMs: int('SQLITE_WAIT_MS', defaults.sqliteWaitMs, 0, 50),
    logLevel: parseLogLevel(read('LOG_LEVEL'), problems),
    logFormat: parseLogFormat(read('LOG_FORMAT'), problems),
    metrics: bool('METRICS', defaults.metrics),
    metricsPort: read('METRICS_PORT') === undefined ? undefined : int('METRICS_PORT', 0, 1, 65_535),
    metricsHost: read('METRICS_HOST'),
    allowedHosts: (read('ALLOWED_HOSTS') ?? '')
      .split(',')
      .map((host) => host.trim().toLowerCase())
      .filter(Boolean),
    bodyTimeoutMs: int('BODY_TIMEOUT_MS', defaults.bodyTimeoutMs, 1_000, 600_000),
    headersTimeoutMs: int('HEADERS_TIMEOUT_MS', defaults.headersTimeoutMs, 1_000, 600_000),
    shutdownDrainMs: int('SHUTDOWN_DRAIN_MS', defaults.shutdownDrainMs, 0, 600_000),
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
  for (const host of config.allowedHosts) {
    if (!/^(\*\.)?[a-z0-9.-]+$|^\[[0-9a-f:.]+\]$/.test(host)) {
      problems.push(
        `ALLOWED_HOSTS has a bad host "${host}" (a name, *.name, an IPv4 or a [IPv6] address, no port)`,
      );
    }
  }
  if (config.metricsHost !== undefined && config.metricsPort === undefined) {
    problems.push('METRICS_HOST needs METRICS_PORT: on the chat port, /metrics binds HOST');
  }
  // Node refuses a header timeout longer than the request timeout it is part of.
  if (config.headersTimeoutMs > config.bodyTimeoutMs) {
    problems.push(
      `HEADERS_TIMEOUT_MS (${config.headersTimeoutMs}) must not be longer than BODY_TIMEOUT_MS (${config.bodyTimeoutMs})`,
    );
  }
  if (config.metricsPort !== undefined && config.metricsPort === config.port) {
    problems.push(
      `METRICS_PORT must differ from PORT (${config.port}); leave it unset to serve /metrics on PORT`,
    );
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
  // A path: a Windows named pipe (\\.\pipe\…, what IIS hands Node) or an
  // absolute Unix socket path. Anything else is a mistake (PORT=abc would
  // otherwise become a socket file named abc in the working folder).
  if (/^(?:\/|\\\\[.?]\\pipe\\)/.test(raw)) return raw;
  problems.push(
    `PORT must be a TCP port (0-65535), an absolute socket path or a named pipe (\\\\.\\pipe\\…), got "${raw}"`,
  );
  return defaults.port;
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

function parseLogFormat(raw: string | undefined, problems: string[]): Config['logFormat'] {
  if (raw === undefined) return defaults.logFormat;
  if (raw === 'json' || raw === 'pretty') return raw;
  problems.push(`LOG_FORMAT must be json or pretty, got "${raw}"`);
  return defaults.logFormat;
}

/**
 * The send limit as a fixed window, the shape express-rate-limit counts in:
 * `sendBurst` sends per window of `sendBurst / sendRatePerSec` seconds (at
 * least one second), so the average stays `sendRatePerSec` a second. A client
 * may get up to twice the burst across the boundary of two windows.
 * Undefined when the limit is off (`SEND_RATE=0`).
 */
export function rateLimitWindow(
  config: Pick<Config, 'sendRatePerSec' | 'sendBurst'>,
): { limit: number; windowMs: number } | undefined {
  if (config.sendRatePerSec === 0) return undefined;
  const windowMs = Math.max(1_000, Math.round((config.sendBurst / config.sendRatePerSec) * 1_000));
  return { limit: Math.max(1, Math.round((windowMs / 1_000) * config.sendRatePerSec)), windowMs };
}

/**
 * Why the `trust proxy` setting is dangerous where it is, if it is.
 * `TRUST_PROXY=true` believes the left-most `X-Forwarded-For` address, which
 * the client writes: on a port open to everyone any client picks its own
 * address, and behind nginx (`$proxy_add_x_forwarded_for` appends to what
 * the client sent) a forged one goes through too. Either way a client
 * escapes every per-address limit. Naming the proxy (`loopback`, its
 * address or subnet) or counting hops (`1`) believes only what it added.
 */
export function trustProxyWarning(
  config: Pick<Config, 'trustProxy' | 'host' | 'port'>,
): string | undefined {
  if (config.trustProxy !== true) return undefined;
  const fix =
    'Set TRUST_PROXY to the proxy instead: loopback (nginx or IIS on this machine), its address or subnet, or a hop count such as 1.';
  const allInterfaces =
    typeof config.port === 'number' &&
    (config.host === undefined || ['0.0.0.0', '::', '[::]'].includes(config.host));
  if (allInterfaces) {
    return `TRUST_PROXY=true while listening on all interfaces: any client that reaches this port can forge X-Forwarded-For and escape the per-address limits. ${fix}`;
  }
  return `TRUST_PROXY=true believes the client's own X-Forwarded-For (a proxy that appends to it keeps a forged address): clients can escape the per-address limits. ${fix}`;
}
