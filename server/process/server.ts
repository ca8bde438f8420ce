/**
 * `startChat(config)`: assembles the seams (docs/design.md, "The seams"),
 * listens, and returns a handle whose `close()` shuts down gracefully:
 * stop accepting → answer every waiting poll with an empty list (clients
 * reconnect elsewhere at once) → close idle keep-alive sockets → close the
 * bus, the presence and the store. `main.ts` calls it for the real server;
 * tests call it with their own config and parts on port 0.
 *
 * Which bus and presence, by set-up:
 *
 * | set-up                          | bus                  | presence                 |
 * |---------------------------------|----------------------|--------------------------|
 * | `REDIS_URL` set                 | `RedisBus`           | Redis sorted sets        |
 * | a cluster worker, no Redis      | `ClusterBus` (IPC)   | kept by the primary      |
 * | one process                     | `LocalBus`           | `LocalPresence`          |
 *
 * Whatever the bus, the store watch looks for other processes' messages in
 * the store while the bus is not live (none, or down).
 */
import cluster from 'node:cluster';
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { type Bus, LocalBus } from '../bus/bus.ts';
import { ClusterBus } from '../bus/cluster-bus.ts';
import { RedisBus } from '../bus/redis-bus.ts';
import { type AddressOf, clientAddress } from '../core/client-address.ts';
import { type Config, trustProxyWarning } from '../core/config.ts';
import { createLog, type Log } from '../core/log.ts';
import type { ChatContext } from '../http/context.ts';
import { createRequestListener } from '../http/lane.ts';
import { pollReplies, reportPolls } from '../http/poll-reply.ts';
import { createHistoryLimit, createSendLimit, createTypingLimit } from '../http/rate-limit.ts';
import type { CountedClient } from '../http/recv.ts';
import type { Clock } from '../hub/clock.ts';
import { Hub } from '../hub/hub.ts';
import { type ChatOps, startOps } from '../metrics/ops.ts';
import type { Telemetry } from '../metrics/telemetry.ts';
import { WriteHealth } from '../metrics/write-health.ts';
import { createEdge } from '../net/edge.ts';
import { createPresenceCap, markUncounted } from '../presence/address-cap.ts';
import { createClusterPresence } from '../presence/cluster-presence.ts';
import { LocalPresence, type Presence } from '../presence/presence.ts';
import { createRedisPresence } from '../presence/redis-presence.ts';
import { SteadyCount } from '../presence/steady-count.ts';
import { StoreRelay } from '../store/cluster-writer.ts';
import { openStore, sqlitePath } from '../store/open-store.ts';
import { Retention } from '../store/retention.ts';
import type { MessageStore } from '../store/store.ts';
import {
  openRedis,
  READY_WAIT_MS,
  type RedisConnections,
  readyWithin,
} from './redis-connections.ts';
import { removeStaleSocket } from './stale-socket.ts';

export interface ChatParts {
  store?: MessageStore;
  /** With `presence`: used instead of what the config would open. */
  bus?: Bus;
  presence?: Presence;
  log?: Log;
  /** Instead of the metrics' own (`ops.telemetry`): what a test wants to see of each poll. */
  telemetry?: Telemetry;
  /** The hub's time and timers (server/hub/clock.ts): tests move it by hand. */
  clock?: Clock;
}

export interface RunningChat extends ChatContext {
  server: Server;
  /** Deletes old messages (server/store/retention.ts); tests run it by hand. */
  retention: Retention;
  /** `http://127.0.0.1:PORT` for a TCP port; the pipe/socket path otherwise. */
  url: string;
  /** Metrics, telemetry and backend states (server/metrics/ops.ts). */
  ops: ChatOps;
  close(): Promise<void>;
}

export async function startChat(
  config: Readonly<Config>,
  parts: ChatParts = {},
): Promise<RunningChat> {
  const log = parts.log ?? createLog(config.logLevel);
  const writes = new WriteHealth({
    timeoutMs: config.storeTimeoutMs,
    windowMs: config.healthWriteWindowMs,
    timers: parts.clock,
  });
  const clusterWriter = parts.store ? undefined : clusterWriterFor(config);
  const opened = parts.store ?? (await openStore(config.databaseUrl, { ...config, clusterWriter }));
  await opened.init();
  const backends =
    parts.bus && parts.presence
      ? { bus: parts.bus, presence: parts.presence, close: async () => {} }
      : await openBackends(config, log, clusterWriter?.relay);
  const { bus } = backends;
  const presence = new SteadyCount(backends.presence, {
    burst: config.presenceChangeBurst,
    changeMs: config.presenceChangeMs,
    maxRooms: config.maxRooms,
  });
  const ops = await startOps(config, {
    log,
    store: opened.kind,
    bus: bus.kind,
    // Read on a scrape only. `hub` is built right after `startOps` resolves,
    // in the same turn: no request can be served, nor scraped, before it.
    waiting: () => hub.waiting,
    rooms: () => hub.rooms,
    maxWaiters: config.maxWaiters,
    redis: backends.redis,
    redisHealth: backends.redisHealth,
    writes,
  });
  // Every store call goes through `writes.track`, the one writer of the
  // store's up/down state (ops.store), so it is built once that state is.
  const tracked = writes.track(opened, ops.store);
  const retention = new Retention(tracked, config, log);
  const store = retention.track(tracked);
  retention.start();
  const telemetry = parts.telemetry ?? ops.telemetry;
  const addressOf = clientAddress(config.trustProxy, config.forwardedForMaxBytes);
  const edge = createEdge(config, {
    log,
    registry: ops.metrics.registry,
    addressOf,
  });
  const hub = new Hub<ServerResponse>({
    config,
    store,
    bus,
    presence,
    replies: pollReplies(addressOf, edge.park),
    log,
    clock: parts.clock,
  });
  reportPolls(hub, telemetry);

  const chat: ChatContext = {
    config,
    store,
    bus,
    hub,
    presence,
    log,
    telemetry,
    redis: backends.redis,
    lifecycle: { draining: false },
  };
  const sendLimit = createSendLimit(config, {
    redis: chat.redis,
    redisHealth: backends.redisHealth,
    log,
    addressOf,
  });
  const typingLimit = createTypingLimit(config, {
    redis: chat.redis,
    redisHealth: backends.redisHealth,
    log,
    addressOf,
  });
  const historyLimit = createHistoryLimit(config, {
    redis: chat.redis,
    redisHealth: backends.redisHealth,
    log,
    addressOf,
  });
  const warning = trustProxyWarning(config);
  if (warning) log('warn', warning);

  // Slow uploads are cut, long-polls are not. Node's `requestTimeout` runs
  // until the request has arrived whole (headers and body), not until it is
  // answered: a poll's GET has arrived before it waits, so it is never cut,
  // while a body dripped byte by byte is, with 408. Node checks these clocks
  // every `connectionsCheckingInterval` (30 s by default, which let slow
  // headers live 89 s): check every second or so.
  const server = createServer(
    {
      ...edge.serverOptions,
      requestTimeout: config.bodyTimeoutMs,
      headersTimeout: config.headersTimeoutMs,
      connectionsCheckingInterval: Math.max(100, Math.min(1_000, config.headersTimeoutMs / 4)),
    },
    edge.listener(
      createRequestListener(chat, {
        ops,
        sendLimit,
        typingLimit,
        historyLimit,
        countedClient: countedClient(config, addressOf, () => edge.uncounted()),
      }),
    ),
  );
  edge.attach(server); // Connection limits, keep-alive, JSON for Node's own refusals (server/net/).

  if (typeof config.port === 'number') server.listen(config.port, config.host);
  else {
    await removeStaleSocket(config.port);
    server.listen(config.port);
  }
  await once(server, 'listening');
  const address = server.address();
  const url =
    typeof address === 'string' || address === null
      ? String(address ?? config.port)
      : `http://${hostFor(address)}:${address.port}`;

  let closing: Promise<void> | undefined;
  async function close(): Promise<void> {
    closing ??= (async () => {
      chat.lifecycle.draining = true;
      if (config.shutdownDrainMs > 0) await delay(config.shutdownDrainMs);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      hub.shutdown();
      server.closeIdleConnections();
      edge.closeIdleParked();
      // Sockets busy with a short request finish it; give them a moment, then cut.
      const cut = setTimeout(() => {
        server.closeAllConnections();
        edge.closeIdleParked();
      }, 2_000);
      await closed;
      clearTimeout(cut);
      hub.close();
      await sendLimit?.close();
      await typingLimit?.close();
      await historyLimit?.close();
      await ops.close();
      await bus.close();
      await presence.close();
      await backends.close();
      await retention.close();
      await store.close();
    })();
    return closing;
  }

  return { ...chat, server, retention, url, ops, close };
}

interface Backends {
  bus: Bus;
  presence: Presence;
  /** The publisher connection, when there is Redis: the send limit and the metrics use it too. */
  redis?: RedisConnections['publisher'];
  /** Whether Redis answers, when there is Redis: the bus, the send limit and the metrics read it. */
  redisHealth?: RedisConnections['health'];
  /** Quits what was opened here. Call after `bus.close()` and `presence.close()`. */
  close(): Promise<void>;
}

/**
 * A cluster worker on a SQLite file writes through the primary's one writer
 * (server/store/cluster-writer.ts); without Redis, that writer relays.
 */
function clusterWriterFor(config: Readonly<Config>): { relay: StoreRelay | undefined } | undefined {
  const { databaseUrl } = config;
  if (!cluster.isWorker || !databaseUrl.startsWith('sqlite:')) return undefined;
  if (sqlitePath(databaseUrl) === ':memory:') return undefined;
  return { relay: config.redisUrl === undefined ? new StoreRelay() : undefined };
}

/**
 * The bus and the presence that the config asks for (the table above).
 * `storeRelay`: where the cluster's SQLite writer relays the messages it commits.
 */
async function openBackends(
  config: Readonly<Config>,
  log: Log,
  storeRelay: StoreRelay | undefined,
): Promise<Backends> {
  const windowMs = config.pollTimeoutMs + config.presenceGraceMs;
  if (config.redisUrl !== undefined) {
    const redis = await openRedis(config.redisUrl, log, config.redisTimeoutMs);
    const { health } = redis;
    const bus = new RedisBus(redis.publisher, redis.subscriber, {
      channel: `${config.redisPrefix}:messages`,
      health,
      log,
    });
    const presence = createRedisPresence(redis.publisher, {
      prefix: config.redisPrefix,
      windowMs,
      clientsPerAddress: config.presenceClientsPerAddress,
      namesPerAddress: config.peopleListedPerAddress,
      staleMs: config.presenceStaleMs,
      health,
      log,
    });
    if (!(await readyWithin(bus.ready(), READY_WAIT_MS))) {
      log('warn', `redis bus: not connected after ${READY_WAIT_MS} ms; starting anyway`);
    }
    return {
      bus,
      presence,
      redis: redis.publisher,
      redisHealth: health,
      close: () => redis.close(),
    };
  }
  if (cluster.isWorker) {
    return {
      bus: new ClusterBus(process, storeRelay),
      presence: createClusterPresence({ windowMs, staleMs: config.presenceStaleMs, log }),
      close: async () => {},
    };
  }
  return {
    bus: new LocalBus(),
    presence: new LocalPresence(windowMs, Date.now, config.maxRooms, config.peopleListedPerAddress),
    close: async () => {},
  };
}

/** The per-address cap of counted presence ids (server/presence/address-cap.ts), for `GET /recv`. */
function countedClient(
  config: Readonly<Config>,
  addressOf: AddressOf,
  onUncounted: () => void,
): CountedClient {
  // Even without a cap (0), an id stays held by the first address to poll with it.
  const admit = createPresenceCap({
    perAddress: config.presenceClientsPerAddress,
    windowMs: config.pollTimeoutMs + config.presenceGraceMs,
  });
  return (req, client) => {
    const address = addressOf(req);
    if (admit(address, client)) return client;
    // Uncounted online, but still a person with a share of the address's polls.
    markUncounted(req, address, client);
    onUncounted();
    return undefined;
  };
}

function hostFor(address: AddressInfo): string {
  if (address.address === '::' || address.address === '0.0.0.0') return '127.0.0.1';
  return address.family === 'IPv6' ? `[${address.address}]` : address.address;
}
