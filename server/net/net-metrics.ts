/**
 * The metrics of the connection layer (server/net/*): connections open and
 * refused, idle ones closed (past an address's cap, or to make room at the
 * process's), requests refused for pipelining, and errors Node's HTTP
 * parser raised. They join the chat's registry
 * (server/metrics/metrics.ts), so `/metrics` and the cluster's sum carry them.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export interface NetMetrics {
  readonly refusedConnections: Counter<'reason'>;
  readonly closedIdle: Counter<'reason'>;
  readonly pipelinedRefused: Counter;
  readonly clientErrors: Counter<'code'>;
  readonly presenceUncounted: Counter;
  readonly untrustedPeer: Counter;
}

export interface NetGauges {
  /** Connections this process holds now. */
  open: () => number;
  /** Most it may hold (`MAX_CONNECTIONS`, or the descriptor limit less a reserve). */
  max: number;
  /** Connections parked now: a waiting poll's, or idle after one, without a parser (parking.ts). */
  parked?: () => number;
}

export function createNetMetrics(registry: Registry | undefined, gauges: NetGauges): NetMetrics {
  const registers = registry ? [registry] : [];
  new Gauge({
    name: 'chat_connections_open',
    help: 'Connections this process holds open.',
    registers,
    collect() {
      this.set(gauges.open());
    },
  });
  new Gauge({
    name: 'chat_connections_parked',
    help: "Connections held without Node's HTTP parser: a poll waiting in a quiet room (POLL_PARK_QUIET_MS), or idle after its answer.",
    registers,
    collect() {
      this.set(gauges.parked?.() ?? 0);
    },
  });
  new Gauge({
    name: 'chat_connections_max',
    help: 'Connections this process may hold (MAX_CONNECTIONS).',
    registers,
  }).set(gauges.max);
  return {
    refusedConnections: new Counter({
      name: 'chat_connections_refused_total',
      help: 'Connections refused as they opened: reason "address" (MAX_CONNECTIONS_PER_ADDRESS) or "total" (MAX_CONNECTIONS).',
      labelNames: ['reason'],
      registers,
    }),
    closedIdle: new Counter({
      name: 'chat_connections_idle_closed_total',
      help: 'Connections without a request closed: reason "address" (idle past MAX_IDLE_PER_ADDRESS) or "total" (the oldest, to make room at MAX_CONNECTIONS).',
      labelNames: ['reason'],
      registers,
    }),
    pipelinedRefused: new Counter({
      name: 'chat_pipelined_refused_total',
      help: 'Requests refused for pipelining (behind a long-poll, or past MAX_PIPELINED).',
      registers,
    }),
    clientErrors: new Counter({
      name: 'chat_http_client_errors_total',
      help: "Requests Node's HTTP parser refused, by the code answered (bad_request, headers_too_large, request_timeout…).",
      labelNames: ['code'],
      registers,
    }),
    untrustedPeer: new Counter({
      name: 'chat_requests_untrusted_peer_total',
      help: 'Requests that came straight from a peer TRUST_PROXY does not trust, while it is set: their X-Forwarded-For is not believed. A count that grows says the port is reachable around the proxy.',
      registers,
    }),
    presenceUncounted: new Counter({
      name: 'chat_presence_uncounted_total',
      help: 'Polls served without being counted online: their address had PRESENCE_CLIENTS_PER_ADDRESS clients counted.',
      registers,
    }),
  };
}
