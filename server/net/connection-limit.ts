/**
 * Connections bounded per client address and in total, as they open.
 *
 * When a connection opens only its peer is known, not the visitor behind a
 * proxy: peers that `TRUST_PROXY` trusts (nginx, IIS) are exempt, and the
 * proxy's own limits apply there, as do connections over a pipe or a Unix
 * socket (iisnode), which have no address. Every other peer may hold at most
 * `maxPerAddress` open connections, and at most `maxIdlePerAddress` idle
 * ones (kept alive after an answer, no request in flight); past that its
 * oldest idle connection is closed, which loses nothing (no request is on
 * it). At `maxPerAddress`, a new connection takes the place of the
 * address's oldest one that carries no request (idle, or silent since it
 * connected), which is closed: many people behind one address (a school, a
 * carrier's NAT) are not locked out by one of them holding sockets open.
 * Only when each of the address's connections carries a request is the new
 * one refused. A connection that never sends a request is cut by
 * `HEADERS_TIMEOUT_MS`.
 * The process holds at most `maxTotal` connections: by default the
 * descriptor limit (`ulimit -n`) less a reserve for the store, Redis and
 * the log, so a flood is refused here before `accept` fails with EMFILE,
 * which Node reports nowhere. At that cap a new connection takes the place
 * of the oldest one that carries no request (idle after an answer, or open
 * and silent since it connected), which is closed, as nginx reclaims its
 * reusable connections: a flood from many addresses, each under its own
 * cap, cannot lock newcomers out while it only holds sockets open. A
 * waiting poll carries its request, so it is never the one closed. Only
 * when every connection carries a request is the new one refused.
 *
 * A refused connection gets a JSON 429 `too_many_connections` (its address)
 * or 503 `connections_full` (the process), and is closed. Refusals and the
 * descriptors running low are logged (at most one line per 10 s each) and
 * counted (server/net/net-metrics.ts), as are the connections closed to
 * make room.
 */
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { compileTrust } from '../core/client-address.ts';
import type { Config } from '../core/config.ts';
import { httpError } from '../core/errors.ts';
import type { Log } from '../core/log.ts';
import type { NetMetrics } from './net-metrics.ts';
import { writeRawError } from './raw-answer.ts';

/** Descriptors kept for everything that is not a client connection. */
const RESERVE = 128;
/** Without a readable limit (not Linux): Node's own default soft limit on most systems is far above this. */
const FALLBACK_MAX = 10_000;
const LOG_EVERY_MS = 10_000;

export interface ConnectionLimitOptions {
  maxPerAddress: number;
  maxIdlePerAddress: number;
  maxTotal: number;
  trustProxy: Config['trustProxy'];
  log: Log;
  metrics?: NetMetrics | undefined;
}

export interface ConnectionLimits {
  /** A request started on `socket`: it is not idle. */
  busy(socket: Socket): void;
  /** `socket` answered all it had: it is idle (and may be closed past the idle cap). */
  idle(socket: Socket): void;
  /** Whether this socket was refused as it opened (its requests are not served). */
  refused(socket: Socket): boolean;
  readonly open: number;
}

interface Peer {
  address: string;
  open: number;
  /** Its idle sockets, oldest first. */
  idle: Set<Socket>;
  /** Its sockets that carry no request (idle, or silent since they opened), oldest first. */
  quiet: Set<Socket>;
}

/** `MAX_CONNECTIONS` when set, else the soft descriptor limit less the reserve. */
export function connectionCap(configured: number | undefined): number {
  if (configured !== undefined) return configured;
  const soft = softDescriptorLimit();
  return soft === undefined ? FALLBACK_MAX : Math.max(64, soft - RESERVE);
}

function softDescriptorLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((row) => row.startsWith('Max open files'));
    const soft = Number(line?.split(/\s{2,}/)[1]);
    return Number.isFinite(soft) && soft > 0 ? soft : undefined;
  } catch {
    return undefined;
  }
}

export function limitConnections(
  server: Server,
  options: ConnectionLimitOptions,
): ConnectionLimits {
  const { maxPerAddress, maxIdlePerAddress, maxTotal, log, metrics } = options;
  const trusted = options.trustProxy === false ? () => false : compileTrust(options.trustProxy);
  const peers = new Map<string, Peer>();
  const refusedSockets = new WeakSet<Socket>();
  const socketPeer = new WeakMap<Socket, Peer>();
  /** Every connection that carries no request, oldest first: what the cap reclaims. */
  const reusable = new Set<Socket>();
  let open = 0;
  let low = false;
  let refusedSinceLog = 0;
  let lastRefusalLog = 0;

  function refuse(socket: Socket, reason: 'address' | 'total', address: string): void {
    refusedSockets.add(socket);
    metrics?.refusedConnections.inc({ reason });
    writeRawError(
      socket,
      reason === 'address'
        ? httpError('too_many_connections', undefined, { retryAfter: 5 })
        : httpError('connections_full', undefined, { retryAfter: 5 }),
    );
    refusedSinceLog += 1;
    const now = Date.now();
    if (now - lastRefusalLog < LOG_EVERY_MS) return;
    lastRefusalLog = now;
    log(
      'warn',
      `connections: refusing connections (${reason === 'address' ? 'an address past MAX_CONNECTIONS_PER_ADDRESS' : 'the process at MAX_CONNECTIONS'})`,
      undefined,
      {
        reason,
        address,
        refused: refusedSinceLog,
        open,
        max: maxTotal,
      },
    );
    refusedSinceLog = 0;
  }

  function noteLevel(): void {
    if (!low && open >= maxTotal * 0.9) {
      low = true;
      log('warn', 'connections: descriptors running low', undefined, { open, max: maxTotal });
    } else if (low && open < maxTotal * 0.8) {
      low = false;
      log('info', 'connections: descriptors back to normal', undefined, { open, max: maxTotal });
    }
  }

  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    if (open >= maxTotal && !reclaim()) return refuse(socket, 'total', address);
    // No address: a pipe or a Unix socket, whose only client is the local proxy (iisnode).
    // Nothing to count per address when both per-address caps are off.
    const exempt =
      (maxPerAddress === 0 && maxIdlePerAddress === 0) || address === '' || trusted(address, 0);
    let peer: Peer | undefined;
    if (!exempt) {
      peer = peers.get(address);
      if (peer && maxPerAddress > 0 && peer.open >= maxPerAddress && !reclaimOf(peer)) {
        return refuse(socket, 'address', address);
      }
      if (!peer) {
        peer = { address, open: 0, idle: new Set(), quiet: new Set() };
        peers.set(address, peer);
      }
      peer.open += 1;
      peer.quiet.add(socket);
      socketPeer.set(socket, peer);
    }
    open += 1;
    reusable.add(socket);
    noteLevel();
    // One listener function for every socket, not a closure per connection.
    socket.on('close', onSocketClose);
  });

  /**
   * At the cap: closes the oldest connection that carries no request. Its
   * descriptor is freed at once; `open` drops when its close event comes.
   * One already destroyed frees nothing more: it is passed over.
   */
  function reclaim(): boolean {
    for (const oldest of reusable) {
      reusable.delete(oldest);
      if (oldest.destroyed) continue;
      const peer = socketPeer.get(oldest);
      peer?.idle.delete(oldest);
      peer?.quiet.delete(oldest);
      metrics?.closedIdle.inc({ reason: 'total' });
      oldest.destroy();
      return true;
    }
    return false;
  }

  /**
   * At an address's cap: closes its oldest connection that carries no
   * request, and counts it gone at once (its close event comes later), so
   * the newcomer takes its place. False when every one carries a request.
   */
  function reclaimOf(peer: Peer): boolean {
    for (const oldest of peer.quiet) {
      peer.quiet.delete(oldest);
      peer.idle.delete(oldest);
      reusable.delete(oldest);
      if (oldest.destroyed) continue;
      socketPeer.delete(oldest);
      peer.open -= 1;
      open -= 1;
      metrics?.closedIdle.inc({ reason: 'address' });
      oldest.off('close', onSocketClose);
      oldest.destroy();
      return true;
    }
    return false;
  }

  function onSocketClose(this: Socket): void {
    open -= 1;
    reusable.delete(this);
    noteLevel();
    const peer = socketPeer.get(this);
    if (!peer) return;
    peer.open -= 1;
    peer.idle.delete(this);
    peer.quiet.delete(this);
    if (peer.open === 0) peers.delete(peer.address);
  }

  function idle(socket: Socket): void {
    // A refused socket was never counted, and has no close listener to forget it.
    if (socket.destroyed || refusedSockets.has(socket)) return;
    // The newest of the reusable: reclaimed last.
    reusable.delete(socket);
    reusable.add(socket);
    const peer = socketPeer.get(socket);
    if (!peer) return;
    peer.quiet.delete(socket);
    peer.quiet.add(socket);
    if (maxIdlePerAddress === 0) return;
    peer.idle.add(socket);
    if (peer.idle.size <= maxIdlePerAddress) return;
    const oldest = peer.idle.values().next().value as Socket;
    peer.idle.delete(oldest);
    peer.quiet.delete(oldest);
    reusable.delete(oldest);
    metrics?.closedIdle.inc({ reason: 'address' });
    oldest.destroy();
  }

  return {
    busy(socket) {
      reusable.delete(socket);
      const peer = socketPeer.get(socket);
      peer?.idle.delete(socket);
      peer?.quiet.delete(socket);
    },
    idle,
    refused: (socket) => refusedSockets.has(socket),
    get open() {
      return open;
    },
  };
}
