/**
 * Every setting of the chat, written once: its environment variable, its
 * default, the values it takes and one line of documentation, with the
 * parser that reads it. `Config` (its type), `defaults` and `loadConfig`
 * (server/core/config.ts) are derived from this table, and so are README.md's
 * "Configuration" table and `.env.example` (`npm run env:example` writes
 * them, `npm run check:docs` fails when they differ), so a setting's
 * documentation cannot drift from its code. A row's order is the README's.
 */
import { cpus } from 'node:os';

/** One setting: how it is read, its default and how the README documents it. */
export interface Setting<T> {
  /** The environment variable. */
  readonly env: string;
  readonly default: T;
  /** The default as the README shows it (Markdown). */
  readonly shown: string;
  /** The values it takes, as the README shows them (Markdown); empty: any text. */
  readonly values: string;
  /** One line of documentation (Markdown), the README's "meaning". */
  readonly doc: string;
  /** Reads the trimmed raw value (undefined when unset or empty); a bad one adds to `problems`. */
  readonly parse: (raw: string | undefined, problems: string[]) => T;
}

interface Described {
  env: string;
  doc: string;
  shown?: string;
}

const code = (value: unknown): string => `\`${String(value)}\``;

/** The fields every kind of setting fills alike: all but `values` and `parse`. */
function head<T>(
  o: Described & { default: T },
): Pick<Setting<T>, 'env' | 'default' | 'shown' | 'doc'> {
  return { env: o.env, default: o.default, shown: o.shown ?? code(o.default), doc: o.doc };
}

/** An integer from `min` to `max`. */
function int(o: Described & { default: number; min: number; max: number }): Setting<number> {
  return {
    ...head(o),
    values: `${o.min}–${o.max}`,
    parse(raw, problems) {
      if (raw === undefined) return o.default;
      const value = Number(raw);
      if (!Number.isInteger(value) || value < o.min || value > o.max) {
        problems.push(`${o.env} must be an integer from ${o.min} to ${o.max}, got "${raw}"`);
        return o.default;
      }
      return value;
    },
  };
}

/** An integer, or undefined when unset (or `auto`, when `auto` is allowed). */
function optionalInt(
  o: Described & { min: number; max: number; auto?: boolean },
): Setting<number | undefined> {
  const base = int({ ...o, default: 0 });
  return {
    ...base,
    default: undefined,
    shown: o.shown ?? 'unset',
    values: o.auto ? `\`auto\`, ${base.values}` : base.values,
    parse: (raw, problems) =>
      raw === undefined || (o.auto && raw === 'auto') ? undefined : base.parse(raw, problems),
  };
}

/** An integer whose `0` turns the bound off (undefined). */
function zeroIsOff(setting: Setting<number>): Setting<number | undefined> {
  return { ...setting, parse: (raw, problems) => setting.parse(raw, problems) || undefined };
}

/** `true`/`false` (or `1`/`0`, `yes`/`no`, `on`/`off`). */
function bool(o: Described & { default: boolean }): Setting<boolean> {
  return {
    ...head(o),
    values: '`true` / `false` (`on` / `off`)',
    parse(raw, problems) {
      const value = raw?.toLowerCase();
      if (value === undefined) return o.default;
      if (['1', 'true', 'yes', 'on'].includes(value)) return true;
      if (['0', 'false', 'no', 'off'].includes(value)) return false;
      problems.push(`${o.env} must be true or false, got "${value}"`);
      return o.default;
    },
  };
}

/** Any text; `check` returns the problem with a value, if any. */
function text(
  o: Described & { default: string; check?: (value: string) => string | undefined },
): Setting<string> {
  return {
    ...head(o),
    values: '',
    parse(raw, problems) {
      if (raw === undefined) return o.default;
      const problem = o.check?.(raw);
      if (problem !== undefined) problems.push(problem);
      return raw;
    },
  };
}

/** Any text, or undefined when unset. */
function optionalText(
  o: Described & { check?: (value: string) => string | undefined },
): Setting<string | undefined> {
  const base = text({ ...o, default: '' });
  return {
    ...base,
    default: undefined,
    shown: o.shown ?? 'unset',
    parse: (raw, problems) => (raw === undefined ? undefined : base.parse(raw, problems)),
  };
}

/** A comma-separated list; `check` returns the problem with an item, if any. */
function list(
  o: Described & { lowercase?: boolean; check: (item: string) => string | undefined },
): Setting<string[]> {
  return {
    ...head({ ...o, default: [], shown: o.shown ?? 'none' }),
    values: 'comma separated',
    parse(raw, problems) {
      const items = (raw ?? '')
        .split(',')
        .map((item) => (o.lowercase ? item.trim().toLowerCase() : item.trim()))
        .filter(Boolean);
      for (const item of items) {
        const problem = o.check(item);
        if (problem !== undefined) problems.push(problem);
      }
      return items;
    },
  };
}

/** One of `values`. */
function oneOf<const V extends string, const D extends V | undefined>(
  o: Described & { values: readonly V[]; default: D },
): Setting<V | D> {
  const names = `${o.values.slice(0, -1).join(', ')} or ${o.values.at(-1)}`;
  return {
    ...head(o),
    values: o.values.map(code).join(', '),
    parse(raw, problems) {
      if (raw === undefined) return o.default;
      if ((o.values as readonly string[]).includes(raw)) return raw as V;
      problems.push(`${o.env} must be ${names}, got "${raw}"`);
      return o.default;
    },
  };
}

const hostPattern = /^(\*\.)?[a-z0-9.-]+$|^\[[0-9a-f:.]+\]$/;

/** The settings, in the README's order; each key is the `Config` property it sets. */
export const settings = {
  port: {
    env: 'PORT',
    default: 3000,
    shown: '`3000`',
    values: '0–65535, a socket path, a named pipe',
    doc: 'TCP port, or an absolute socket path or a named pipe (`\\\\.\\pipe\\…`, which IIS passes); anything else is refused',
    parse(raw, problems) {
      if (raw === undefined) return 3000;
      if (/^\d+$/.test(raw)) {
        const port = Number(raw);
        if (port <= 65_535) return port;
        problems.push(`PORT must be a TCP port (0-65535) or a pipe/socket path, got "${raw}"`);
        return 3000;
      }
      // A path: a Windows named pipe (\\.\pipe\…, what IIS hands Node) or an
      // absolute Unix socket path. Anything else is a mistake (PORT=abc would
      // otherwise become a socket file named abc in the working folder).
      if (/^(?:\/|\\\\[.?]\\pipe\\)/.test(raw)) return raw;
      problems.push(
        `PORT must be a TCP port (0-65535), an absolute socket path or a named pipe (\\\\.\\pipe\\…), got "${raw}"`,
      );
      return 3000;
    },
  } satisfies Setting<number | string> as Setting<number | string>,
  host: optionalText({ env: 'HOST', shown: 'all interfaces', doc: 'interface to bind' }),
  databaseUrl: text({
    env: 'DATABASE_URL',
    default: 'sqlite:data/chat.sqlite',
    doc: '`sqlite:<file>`, `mysql://user:pass@host:3306/db`, `mongodb://host:27017/db`, `memory:` (tests)',
    check: (url) =>
      /^(sqlite:|mysql:\/\/|mongodb(\+srv)?:\/\/|memory:)/.test(url)
        ? undefined
        : `DATABASE_URL must start with sqlite:, mysql://, mongodb:// or memory:, got "${url}"`,
  }),
  redisUrl: optionalText({
    env: 'REDIS_URL',
    doc: "turns on the Redis bus: several processes or machines deliver to each other's polls",
    check: (url) =>
      /^rediss?:\/\//.test(url)
        ? undefined
        : `REDIS_URL must start with redis:// or rediss://, got "${url}"`,
  }),
  redisPrefix: text({
    env: 'REDIS_PREFIX',
    default: 'lpchat',
    doc: 'prefix of Redis channels and keys, so several chats can share one Redis',
  }),
  redisTimeoutMs: int({
    env: 'REDIS_TIMEOUT_MS',
    default: 500,
    min: 10,
    max: 60_000,
    doc: 'Redis counts as down when a command or the heartbeat (a `PING` on each connection every half of this) gets no answer within this, as when it is unreachable: the bus is down (`chat_bus_up` 0, the store watch delivers), and the send limit and the online count fall back to this process at once, until Redis answers again',
  }),
  workers: {
    env: 'WORKERS',
    default: 1,
    shown: '`1`',
    values: '`auto`, 1–256',
    doc: 'cluster workers on this machine; `auto` = one per core',
    parse(raw, problems) {
      if (raw === undefined) return 1;
      if (raw === 'auto') return Math.max(1, cpus().length);
      const workers = Number(raw);
      if (Number.isInteger(workers) && workers >= 1 && workers <= 256) return workers;
      problems.push(`WORKERS must be "auto" or an integer from 1 to 256, got "${raw}"`);
      return 1;
    },
  } satisfies Setting<number> as Setting<number>,
  pollTimeoutMs: int({
    env: 'POLL_TIMEOUT_MS',
    default: 25_000,
    min: 100,
    max: 600_000,
    doc: 'how long a `GET /recv` is held before its empty answer',
  }),
  presenceGraceMs: int({
    env: 'PRESENCE_GRACE_MS',
    default: 5_000,
    min: 0,
    max: 600_000,
    doc: 'how long past the poll timeout a client still counts as online',
  }),
  presenceStaleMs: int({
    env: 'PRESENCE_STALE_MS',
    default: 10_000,
    min: 100,
    max: 600_000,
    doc: 'with `WORKERS` or `REDIS_URL`: how long the last shared online count is still shown while the primary or Redis does not answer; past it each process counts its own clients',
  }),
  maxWaiters: int({
    env: 'MAX_WAITERS',
    default: 50_000,
    min: 1,
    max: 10_000_000,
    doc: 'waiting polls one process holds; past it `/recv` answers 503 `overloaded`',
  }),
  maxPollsPerAddress: int({
    env: 'MAX_POLLS_PER_ADDRESS',
    default: 500,
    min: 0,
    max: 10_000_000,
    doc: 'waiting polls one client address may hold, all the people behind it together (the last line behind a NAT, above their shares, `MAX_POLLS_PER_CLIENT`); past it `/recv` answers 429 `too_many_polls`; `0` turns it off',
  }),
  maxPollsPerClient: int({
    env: 'MAX_POLLS_PER_CLIENT',
    default: 10,
    min: 0,
    max: 10_000_000,
    doc: "waiting polls one browser (`client` id) may hold, a fair share of its address's `MAX_POLLS_PER_ADDRESS`: a neighbour behind the same NAT fills its own share, not theirs (a page holds one per room it shows); an address's polls without a `client` id share one such share; past it `/recv` answers 429 `too_many_polls`; `0` turns it off",
  }),
  maxConnectionsPerAddress: int({
    env: 'MAX_CONNECTIONS_PER_ADDRESS',
    default: 1024,
    min: 0,
    max: 10_000_000,
    doc: "open connections one peer address may hold; past it a new one takes the place of the address's oldest connection that carries no request (idle, or silent since it opened), which is closed, so people behind one NAT are not locked out by a neighbour's silent sockets; only when each carries a request (a waiting poll, a send) does the new one get 429 `too_many_connections` and is closed. Peers `TRUST_PROXY` trusts (nginx, IIS) are exempt: behind a proxy the peer is the proxy, whose own limits apply (with a hop count or `true`, every peer is trusted), and so are connections over a pipe or Unix socket; `0` turns it off",
  }),
  maxIdlePerAddress: int({
    env: 'MAX_IDLE_PER_ADDRESS',
    default: 32,
    min: 0,
    max: 10_000_000,
    doc: 'idle keep-alive connections one peer address may hold; past it its oldest idle one is closed (no request is on it); trusted proxies exempt; `0` turns it off',
  }),
  maxConnections: optionalInt({
    env: 'MAX_CONNECTIONS',
    shown: '`auto`',
    auto: true,
    min: 1,
    max: 10_000_000,
    doc: 'connections the process holds at most; at it, a new one takes the place of the oldest that carries no request (idle, or silent since it opened), which is closed; only when every one carries a request does the new one get 503 `connections_full`. `auto`: the descriptor limit (`ulimit -n`) less 128 for the store, Redis and the log, so a flood is refused and logged before `accept` fails silently',
  }),
  maxPipelined: int({
    env: 'MAX_PIPELINED',
    default: 16,
    min: 1,
    max: 1_000,
    doc: 'unanswered requests one connection may hold (HTTP/1.1 pipelining; browsers never pipeline). Past it, and behind any unanswered `/recv`, a request gets 400 `pipelining_refused` with `Connection: close`, the poll ahead of it is answered with the same refusal at once, and the connection closes: what the client wrote after is never read',
  }),
  keepAliveTimeoutMs: int({
    env: 'KEEP_ALIVE_TIMEOUT_MS',
    default: 65_000,
    min: 1_000,
    max: 600_000,
    doc: "an idle keep-alive connection is closed after this. Behind a proxy keep it above the proxy's upstream keep-alive (nginx: 60 s), so the proxy never reuses a connection the chat is closing; the chat warns at start when it is not",
  }),
  presenceClientsPerAddress: int({
    env: 'PRESENCE_CLIENTS_PER_ADDRESS',
    default: 100,
    min: 0,
    max: 10_000_000,
    doc: '`client` ids one address may have counted online at once; a poll past it is served but not counted (so is a poll naming a `client` id another address polls with: the first holder keeps its name); with `WORKERS` or Redis the cap holds across every process too, in the shared count; `0` turns it off',
  }),
  presenceChangeBurst: int({
    env: 'PRESENCE_CHANGE_BURST',
    default: 4,
    min: 1,
    max: 1_000,
    doc: "a room's online count shows this many changes in a row, then at most one per `PRESENCE_CHANGE_MS`, so churn cannot keep waking a room's polls",
  }),
  presenceChangeMs: int({
    env: 'PRESENCE_CHANGE_MS',
    default: 15_000,
    min: 0,
    max: 600_000,
    doc: "past `PRESENCE_CHANGE_BURST` changes in a row, a room's online count changes at most once per this; `0` shows every change",
  }),
  maxRooms: int({
    env: 'MAX_ROOMS',
    default: 10_000,
    min: 1,
    max: 10_000_000,
    doc: 'rooms whose recent messages the process holds in memory; past it the least recently used room is dropped',
  }),
  roomIdleMs: int({
    env: 'ROOM_IDLE_MS',
    default: 30_000,
    min: 1_000,
    max: 86_400_000,
    doc: 'a room with no waiting poll and no message for this long is dropped from memory',
  }),
  storePollMs: int({
    env: 'STORE_POLL_MS',
    default: 1_000,
    min: 50,
    max: 60_000,
    doc: 'how often a process reads the store for messages it was not told about (while the bus is down, or without a bus)',
  }),
  deliveryBatchMs: int({
    env: 'DELIVERY_BATCH_MS',
    default: 10,
    min: 0,
    max: 1_000,
    doc: "a busy room's waiting polls are answered at most this often, each answer with every message since (fewer answers per message); 0: every turn of the event loop",
  }),
  relayBatchMs: int({
    env: 'RELAY_BATCH_MS',
    default: 3,
    min: 0,
    max: 1_000,
    doc: "in cluster mode on SQLite, the writer hands each worker the messages the other workers committed at most this often, all since in one go (fewer wakes of every worker); the first after a quiet spell goes at once, and so does any with the worker's own acknowledgements; 0: at each commit",
  }),
  pollParkQuietMs: zeroIsOff(
    int({
      env: 'POLL_PARK_QUIET_MS',
      default: 1_000,
      min: 0,
      max: 3_600_000,
      doc: "a poll that starts to wait in a quiet room (its last message this long ago or more, or its last two messages this far apart) gives its connection's HTTP parser back to Node while it waits, and gets one again with its next request; so does a new connection until its first bytes: less memory per waiting poll, a little more CPU per answer, so a busy room's polls keep theirs; `0` turns it off",
    }),
  ),
  presenceNotifyMs: int({
    env: 'PRESENCE_NOTIFY_MS',
    default: 3_000,
    min: 0,
    max: 600_000,
    doc: "how soon waiting polls hear that their room's online count or list of names changed; `0` turns it off",
  }),
  sendRatePerSec: int({
    env: 'SEND_RATE',
    default: 5,
    min: 0,
    max: 1_000_000,
    doc: "the send limit per person: each browser (the `client` id a send carries) behind a client address has its own share of `SEND_BURST` sends per window of `SEND_BURST / SEND_RATE` seconds (at least 1 s), so `SEND_RATE` a second on average; the address's sends without a `client` id (curl, the 2011 form) share one such share; the address as a whole has `SEND_ADDRESS_RATE`. Counted in Redis when `REDIS_URL` is set (one limit across every process), else in memory; `0` turns it off. A window is fixed: a client may get up to twice the burst across the boundary of two windows",
  }),
  sendBurst: int({
    env: 'SEND_BURST',
    default: 20,
    min: 1,
    max: 1_000_000,
    doc: 'sends one browser (`client` id) may make in one window of the send limit (`SEND_RATE`)',
  }),
  sendAddressRate: int({
    env: 'SEND_ADDRESS_RATE',
    default: 50,
    min: 0,
    max: 1_000_000,
    doc: 'sends per second on average one client address may make, all its people together, counted in the send limit\'s window (`SEND_ADDRESS_RATE` × the window\'s seconds per window): the last line behind a NAT, above each person\'s share, and what bounds one who invents many `client` ids; raise it for a big NAT (the numbers are under "Many people behind one address", in "Operating it"); `0`: no ceiling',
  }),
  typingRatePerSec: int({
    env: 'TYPING_RATE',
    default: 2,
    min: 0,
    max: 1_000_000,
    doc: 'the `POST /typing` limit per person (the `client` id of the notice) behind a client address, counted like the send limit but apart from it, with `TYPING_BURST` in a window; a page sends one every 2.5 s at most while its person types; the address as a whole has `TYPING_ADDRESS_RATE`; `0` turns it off',
  }),
  typingBurst: int({
    env: 'TYPING_BURST',
    default: 20,
    min: 1,
    max: 1_000_000,
    doc: '`POST /typing` one browser (`client` id) may make in one window of the typing limit (`TYPING_RATE`)',
  }),
  typingAddressRate: int({
    env: 'TYPING_ADDRESS_RATE',
    default: 50,
    min: 0,
    max: 1_000_000,
    doc: "`POST /typing` per second on average one client address may make, all its people together, counted in the typing limit's window: the last line behind a NAT, above each person's share; raise it for a big NAT; `0`: no ceiling",
  }),
  historyRatePerSec: int({
    env: 'HISTORY_RATE',
    default: 5,
    min: 0,
    max: 1_000_000,
    doc: 'the `GET /history` limit per client address, counted like the send limit but apart from it, with `HISTORY_BURST` in a window (429 `history_rate_limited` with `Retry-After`); a page asks for one page as it opens and one per scroll to the top; `0` turns it off',
  }),
  historyBurst: int({
    env: 'HISTORY_BURST',
    default: 50,
    min: 1,
    max: 1_000_000,
    doc: '`GET /history` one client address may make in one window of the history limit (`HISTORY_RATE`)',
  }),
  typingWakeMs: int({
    env: 'TYPING_WAKE_MS',
    default: 2_500,
    min: 100,
    max: 60_000,
    doc: "a room's waiting polls are woken for typing at most this often, however many type",
  }),
  typingTtlMs: int({
    env: 'TYPING_TTL_MS',
    default: 5_000,
    min: 100,
    max: 60_000,
    doc: 'someone counts as typing this long after their last `POST /typing`; the wake after they expire tells the room',
  }),
  presenceTagSecret: optionalText({
    env: 'PRESENCE_TAG_SECRET',
    doc: 'the key of the opaque tags typing entries carry in place of client ids (an HMAC of room and client id); unset, each process makes a random one, and with `WORKERS` the primary makes one for its workers, but servers on several machines (Redis) must set the same one, or a page that polls two of them may see a typist twice until the next typing answer',
  }),
  peopleListedPerAddress: int({
    env: 'PEOPLE_LISTED_PER_ADDRESS',
    default: 3,
    min: 0,
    max: 50,
    doc: 'names from one client address the room\'s list ("Here:") shows at most, the rest counted in `more`, so many client ids from one address cannot push everyone else out of it (in one process, across `WORKERS` and across processes on Redis); `0` turns it off',
  }),
  typistsPerAddress: int({
    env: 'TYPISTS_PER_ADDRESS',
    default: 2,
    min: 0,
    max: 1_000_000,
    doc: 'typists one client address may have in one room at once (on every process: the bus carries the address); a new `client` id past it types unseen until one of them stops or expires; `0` turns it off',
  }),
  bodyTimeoutMs: int({
    env: 'BODY_TIMEOUT_MS',
    default: 15_000,
    min: 1_000,
    max: 600_000,
    doc: 'a request must have arrived whole, headers and body, within this; a slower upload is cut with 408 (a long-poll is never cut: its request has arrived before it waits)',
  }),
  headersTimeoutMs: int({
    env: 'HEADERS_TIMEOUT_MS',
    default: 10_000,
    min: 1_000,
    max: 600_000,
    doc: 'the request headers must have arrived within this (at most `BODY_TIMEOUT_MS`)',
  }),
  trustProxy: {
    env: 'TRUST_PROXY',
    default: false,
    shown: '`false`',
    values: '`false`, `loopback`, addresses or subnets, a hop count',
    doc: "Express `trust proxy`: who may tell the visitor's address in `X-Forwarded-For` (`loopback`, addresses or subnets, a hop count). The header is read from its right end, only as far as the hops trusted, and an entry that is not an IP address stops it at the hop that passed it on. Never `true`: see [Operating it](#operating-it)",
    parse(raw) {
      if (raw === undefined || raw === 'false') return false;
      if (raw === 'true') return true;
      if (/^\d+$/.test(raw)) return Number(raw);
      return raw; // "loopback", "10.0.0.0/8, 127.0.0.1": Express parses these itself.
    },
  } satisfies Setting<boolean | number | string> as Setting<boolean | number | string>,
  forwardedForMaxBytes: int({
    env: 'FORWARDED_FOR_MAX_BYTES',
    default: 1_024,
    min: 64,
    max: 16_384,
    doc: "bytes of `X-Forwarded-For` read, from its right end (where the proxies append); a longer header's start, written by the client, is never parsed",
  }),
  allowedOrigins: list({
    env: 'ALLOWED_ORIGINS',
    doc: 'other origins allowed to `POST /send`',
    check: (origin) =>
      URL.canParse(origin) ? undefined : `ALLOWED_ORIGINS has a bad origin "${origin}"`,
  }),
  serveStatic: bool({
    env: 'SERVE_STATIC',
    default: true,
    doc: 'serve `public/` from Node (off when IIS or nginx serves it)',
  }),
  staticDir: text({ env: 'STATIC_DIR', default: 'public', doc: 'folder of the built client' }),
  storeTimeoutMs: int({
    env: 'STORE_TIMEOUT_MS',
    default: 2_000,
    min: 50,
    max: 60_000,
    doc: "a store call slower than this answers 503 (a send, a catch-up that reads the store, `/history`, `/health`); SQLite's writer waits for the file's write lock only this long, and a send it gives up on stores nothing",
  }),
  healthWriteWindowMs: int({
    env: 'HEALTH_WRITE_WINDOW_MS',
    default: 30_000,
    min: 1_000,
    max: 86_400_000,
    doc: "after a send's write fails, `/health` answers 503 until a write succeeds or this long passes without another failure",
  }),
  sqliteWaitMs: int({
    env: 'SQLITE_WAIT_MS',
    default: 0,
    min: 0,
    max: 50,
    doc: 'how long the event loop may wait, at the end of a turn, for the SQLite writes it made, so that they are acknowledged in that turn; none is waited for after a wait ran out, nor after a write that ran longer than this in the worker; `0` (the default, since the delivery batch does the batching) never waits',
  }),
  sqliteMaxMb: zeroIsOff(
    int({
      env: 'SQLITE_MAX_MB',
      default: 1024,
      min: 0,
      max: 16_000_000,
      doc: 'the SQLite file stops growing at this size (`PRAGMA max_page_count`); past it sends answer 503, as on a full disk, until retention deletes messages (SQLite reuses the freed pages); `0`: unlimited',
    }),
  ),
  retentionDays: int({
    env: 'RETENTION_DAYS',
    default: 30,
    min: 0,
    max: 36_500,
    doc: "messages older than this are deleted (a room's newest is always kept, so its ids carry on); `0` keeps them by age",
  }),
  retentionPerRoom: int({
    env: 'RETENTION_PER_ROOM',
    default: 10_000,
    min: 0,
    max: 1_000_000_000,
    doc: 'a room keeps its newest this many messages; `0`: no bound by count',
  }),
  retentionIntervalMs: int({
    env: 'RETENTION_INTERVAL_MS',
    default: 60_000,
    min: 100,
    max: 86_400_000,
    doc: 'how often each process deletes what retention says (at start, then every this; sooner while there is a backlog)',
  }),
  retentionBatch: int({
    env: 'RETENTION_BATCH',
    default: 5_000,
    min: 1,
    max: 1_000_000,
    doc: 'messages one retention run deletes at most, so a run stays short for the database (MySQL and MongoDB too)',
  }),
  sendKbPerHour: int({
    env: 'SEND_KB_PER_HOUR',
    default: 1024,
    min: 0,
    max: 1_000_000_000,
    doc: 'KiB of text (and nickname) one client address may have stored per hour, all its people together (each has `SEND_KB_PER_HOUR_PER_CLIENT` of it), beside the send rate; past it 429 `storage_limited` with `Retry-After`; counted in each process; `0` turns it off',
  }),
  sendKbPerHourPerClient: int({
    env: 'SEND_KB_PER_HOUR_PER_CLIENT',
    default: 256,
    min: 0,
    max: 1_000_000_000,
    doc: "each person's share of `SEND_KB_PER_HOUR` (the send's `client` id; an address's sends without one share one share), so one neighbour behind a NAT who sends long messages uses up its own share, not the address's; `0`: no shares",
  }),
  logLevel: oneOf({
    env: 'LOG_LEVEL',
    values: ['error', 'warn', 'info', 'debug'],
    default: 'info',
    doc: '`info` writes one line per request',
  }),
  logFormat: oneOf({
    env: 'LOG_FORMAT',
    values: ['json', 'pretty'],
    default: undefined,
    shown: 'pretty on a terminal, else `json`',
    doc: '`json`: every line a JSON object, each request included; `pretty`: lines for a person, requests summed up once a minute',
  }),
  metrics: bool({
    env: 'METRICS',
    default: true,
    shown: '`on`',
    doc: '`off` turns `GET /metrics` off',
  }),
  metricsPort: optionalInt({
    env: 'METRICS_PORT',
    shown: "the chat's port",
    min: 1,
    max: 65_535,
    doc: 'serve `/metrics` on this port instead (in cluster mode the primary listens on it, for every worker)',
  }),
  metricsHost: optionalText({
    env: 'METRICS_HOST',
    shown: '`HOST`',
    doc: 'interface `METRICS_PORT` binds: `127.0.0.1` keeps the metrics on the machine (needs `METRICS_PORT`)',
  }),
  shutdownDrainMs: int({
    env: 'SHUTDOWN_DRAIN_MS',
    default: 0,
    min: 0,
    max: 600_000,
    doc: 'on SIGTERM, how long the chat goes on serving, with `/ready` and `/health` answering 503 `draining`, before it stops accepting and answers its waiting polls: set it to the time your load balancer needs to notice (its check interval times its failure count)',
  }),
  allowedHosts: list({
    env: 'ALLOWED_HOSTS',
    shown: 'loopback names on a loopback `HOST` without `TRUST_PROXY`, else any',
    lowercase: true,
    doc: "host names the chat answers for (no port; `*.example.org` for subdomains), read from `Host` (or the authority of an absolute-form target), or from `X-Forwarded-Host` sent by a trusted proxy; any other gets 421 `host_not_allowed`. Unset on a loopback `HOST` (`127.0.0.1`, `::1`, `localhost`) with `TRUST_PROXY` off (no proxy in front: a chat on a developer's machine), only `localhost`, `*.localhost` and loopback addresses are answered, and a request whose `Origin` is another site (not in `ALLOWED_ORIGINS`) gets 403 `cross_site`, against DNS rebinding. **Behind a proxy, set it to the site's name**: the proxy's visitors are then the only ones answered. Set it too when the chat is reachable on a LAN address",
    check: (host) =>
      hostPattern.test(host)
        ? undefined
        : `ALLOWED_HOSTS has a bad host "${host}" (a name, *.name, an IPv4 or a [IPv6] address, no port)`,
  }),
} as const;

type ValueOf<S> = S extends Setting<infer T> ? T : never;

/** The chat's configuration: a property per setting, typed by its parser. */
export type Config = { -readonly [K in keyof typeof settings]: ValueOf<(typeof settings)[K]> };

/** Every setting at its default. */
export const defaults: Config = Object.freeze(
  Object.fromEntries(Object.entries(settings).map(([key, s]) => [key, s.default])) as Config,
);
