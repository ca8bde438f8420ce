/**
 * The connection layer in front of the request listener, assembled once
 * for `server.ts`: what a stranger can do with sockets before any route
 * runs, bounded (docs/design.md, "Limits").
 *
 * In order, for each request: the Host check (`ALLOWED_HOSTS`,
 * host-check.ts) → pipelining (pipelining.ts) → the chat's listener. On the server: connections per address and in total
 * (connection-limit.ts), and JSON answers to what Node's HTTP layer refuses
 * (client-error.ts).
 */
import type { RequestListener, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Registry } from 'prom-client';
import { type AddressOf, compileTrust } from '../core/client-address.ts';
import type { Config } from '../core/config.ts';
import type { Log } from '../core/log.ts';
import { answerClientErrors } from './client-error.ts';
import { connectionCap, limitConnections } from './connection-limit.ts';
import { checkHost, HOST_CHECK_SERVER_OPTIONS } from './host-check.ts';
import { createNetMetrics } from './net-metrics.ts';
import { createParking } from './parking.ts';
import { guardPipelining, refuseParked } from './pipelining.ts';

export interface EdgeOptions {
  log: Log;
  registry?: Registry | undefined;
  addressOf: AddressOf;
}

export interface Edge {
  /** Options for `createServer`. */
  readonly serverOptions: typeof HOST_CHECK_SERVER_OPTIONS;
  /** The request listener to give `createServer`. */
  listener(inner: RequestListener): RequestListener;
  /** Adds the connection limits and the `clientError`/`connect` answers to `server`. */
  attach(server: Server): void;
  /** A poll served uncounted by the presence cap (`chat_presence_uncounted_total`). */
  uncounted(): void;
  /** A poll in a quiet room: its connection waits without a parser (parking.ts). */
  park(res: ServerResponse): void;
  /** Closes the parked connections that wait for no answer (Node's `closeIdleConnections` does not see them). */
  closeIdleParked(): void;
}

/** Behind a proxy, Node must keep an idle connection longer than the proxy does (nginx: 60 s). */
const PROXY_KEEP_ALIVE_MS = 60_000;

export function createEdge(config: Readonly<Config>, options: EdgeOptions): Edge {
  const { log } = options;
  const maxTotal = connectionCap(config.maxConnections);
  let limits: ReturnType<typeof limitConnections> | undefined;
  const parking = createParking({
    onPipelined(poll, socket) {
      metrics.pipelinedRefused.inc();
      refuseParked(poll, socket);
    },
  });
  const metrics = createNetMetrics(options.registry, {
    open: () => limits?.open ?? 0,
    max: maxTotal,
    parked: () => parking.parked,
  });
  if (config.trustProxy !== false && config.keepAliveTimeoutMs <= PROXY_KEEP_ALIVE_MS) {
    log(
      'warn',
      `KEEP_ALIVE_TIMEOUT_MS=${config.keepAliveTimeoutMs} behind a proxy: keep it above the proxy's upstream keep-alive (nginx 60 s), or the proxy may reuse a connection Node is closing`,
    );
  }
  return {
    serverOptions: HOST_CHECK_SERVER_OPTIONS,
    listener(inner) {
      const piped = guardPipelining(inner, {
        maxPipelined: config.maxPipelined,
        onBusy: (socket) => limits?.busy(socket),
        onIdle: (socket) => limits?.idle(socket),
        isRefused: (socket) => limits?.refused(socket) ?? false,
        onRefused: () => metrics.pipelinedRefused.inc(),
      });
      return checkHost(countUntrusted(piped, config.trustProxy, metrics), config);
    },
    attach(server) {
      limits = limitConnections(server, {
        maxPerAddress: config.maxConnectionsPerAddress,
        maxIdlePerAddress: config.maxIdlePerAddress,
        maxTotal,
        trustProxy: config.trustProxy,
        log,
        metrics,
      });
      answerClientErrors(server, metrics);
      server.keepAliveTimeout = config.keepAliveTimeoutMs;
      // Off with POLL_PARK_QUIET_MS=0: every connection then has Node's set-up as it comes.
      if (config.pollParkQuietMs !== undefined) parking.adopt(server, config.headersTimeoutMs);
    },
    uncounted: () => metrics.presenceUncounted.inc(),
    park: (res) => parking.park(res),
    closeIdleParked: () => parking.closeIdle(),
  };
}

/** Whether a connection's peer is a proxy `TRUST_PROXY` trusts: judged once per connection. */
const trustedPeer = Symbol('trustedPeer');

/**
 * `listener`, counting the requests that come straight from a peer that is
 * not a trusted proxy while `TRUST_PROXY` is set
 * (`chat_requests_untrusted_peer_total`): someone reaches the port around
 * the proxy. Unset, nothing is counted and nothing is added.
 */
function countUntrusted(
  listener: RequestListener,
  trustProxy: Config['trustProxy'],
  metrics: ReturnType<typeof createNetMetrics>,
): RequestListener {
  if (trustProxy === false) return listener;
  const trust = compileTrust(trustProxy);
  return (req, res) => {
    const socket = req.socket as Socket & { [trustedPeer]?: boolean };
    let trusted = socket[trustedPeer];
    if (trusted === undefined) {
      const peer = socket.remoteAddress;
      // A pipe or Unix socket has no peer address: the proxy's own.
      trusted = peer === undefined || trust(peer, 0);
      socket[trustedPeer] = trusted;
    }
    if (!trusted) metrics.untrustedPeer.inc();
    listener(req, res);
  };
}
