/**
 * `startChat(config)`: builds the store, bus, presence and hub, listens, and
 * returns a handle whose `close()` shuts down gracefully:
 * stop accepting → answer every waiting poll with an empty list (clients
 * reconnect elsewhere at once) → close idle keep-alive sockets → close the
 * bus and the store. `main.ts` calls it for the real server; tests call it
 * with their own config and store on port 0.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Bus } from './bus/bus.ts';
import { openBus } from './bus/open-bus.ts';
import { type Config, trustProxyWarning } from './config.ts';
import { createApp } from './http/app.ts';
import type { ChatContext } from './http/context.ts';
import { createSendLimit } from './http/rate-limit.ts';
import { Hub } from './hub/hub.ts';
import type { Presence } from './hub/presence.ts';
import { createLog, type Log } from './log.ts';
import { type ChatOps, startOps } from './metrics/ops.ts';
import { removeStaleSocket } from './stale-socket.ts';
import { openStore } from './store/open-store.ts';
import type { MessageStore } from './store/store.ts';

export interface ChatParts {
  store?: MessageStore;
  bus?: Bus;
  presence?: Presence;
  log?: Log;
}

export interface RunningChat extends ChatContext {
  server: Server;
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
  const store = parts.store ?? (await openStore(config.databaseUrl));
  await store.init();
  // The bus and presence come from the config (Redis, cluster IPC, or one
  // process) unless the caller hands its own in.
  const opened = parts.bus && parts.presence ? undefined : await openBus(config, log);
  const bus = parts.bus ?? opened!.bus;
  const presence = parts.presence ?? opened!.presence;
  if (opened && bus !== opened.bus) await opened.bus.close();
  if (opened && presence !== opened.presence) await opened.presence.close();
  const hub = new Hub({
    store,
    presence,
    pollTimeoutMs: config.pollTimeoutMs,
    maxWaiters: config.maxWaiters,
    trustRing: bus.kind === 'local',
    log,
  });
  bus.onMessage((message) => hub.publish(message));

  const chat: ChatContext = { config, store, bus, hub, presence, log, redis: opened?.redis };
  const ops = await startOps(config, {
    log,
    store: store.kind,
    bus: bus.kind,
    waiting: () => hub.size,
    maxWaiters: config.maxWaiters,
    redis: opened?.redis,
  });
  const sendLimit = createSendLimit(config, { redis: chat.redis, log });
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
      requestTimeout: config.bodyTimeoutMs,
      headersTimeout: config.headersTimeoutMs,
      connectionsCheckingInterval: Math.max(100, Math.min(1_000, config.headersTimeoutMs / 4)),
    },
    createApp(chat, { ops, sendLimit }),
  );
  server.keepAliveTimeout = 65_000; // Longer than common proxies' idle timeout (nginx 60 s).

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
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      hub.shutdown();
      server.closeIdleConnections();
      // Sockets busy with a short request finish it; give them a moment, then cut.
      const cut = setTimeout(() => server.closeAllConnections(), 2_000);
      await closed;
      clearTimeout(cut);
      await sendLimit?.close();
      await ops.close();
      await bus.close();
      await presence.close();
      await opened?.close();
      await store.close();
    })();
    return closing;
  }

  return { ...chat, server, url, ops, close };
}

function hostFor(address: AddressInfo): string {
  if (address.address === '::' || address.address === '0.0.0.0') return '127.0.0.1';
  return address.family === 'IPv6' ? `[${address.address}]` : address.address;
}
