/**
 * The client's address and the host it asked for, the same ones Express gives
 * as `req.ip` and `req.host`, for code that runs before Express (the lanes,
 * `lane.ts`). Behind a proxy, `TRUST_PROXY` says which hops may name the
 * visitor in `X-Forwarded-For` and the host in `X-Forwarded-Host`; the rule
 * is Express's own (its `trust proxy` setting, with proxy-addr's `compile`).
 *
 * `X-Forwarded-For` is what the client wrote, with what the proxies appended
 * at its right end, so it is read from the right and only as far as the
 * hops trusted: each trusted hop names the one before it, and the first
 * that is not trusted is the client. Bounded against a stranger who writes
 * a long one: only its last `FORWARDED_FOR_MAX_BYTES` are read (a proxy's
 * own hops are at the end), and an entry that is not an IP address ends
 * the walk at the hop that passed it on. So an address is always a
 * socket's or a well-formed IP, a short string of its own: the tables kept
 * per address (rate limits, presence caps) hold nothing of the header.
 */
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import proxyAddr from 'proxy-addr';
import type { Config } from './config.ts';

export type AddressOf = (req: IncomingMessage) => string;

/** The longest IP address written out (IPv6 with an embedded IPv4), plus a short zone. */
const MAX_ADDRESS_LENGTH = 64;

/** @default FORWARDED_FOR_MAX_BYTES's default (config.ts) */
const DEFAULT_MAX_BYTES = 1_024;

export function clientAddress(
  trustProxy: Config['trustProxy'],
  maxBytes: number = DEFAULT_MAX_BYTES,
): AddressOf {
  if (trustProxy === false) return (req) => req.socket.remoteAddress ?? 'unknown';
  const trust = compileTrust(trustProxy);
  return (req) => forwardedAddress(req, trust, maxBytes);
}

/** Express's `req.ip` by the rule above (`clientAddress`). */
export function forwardedAddress(
  req: IncomingMessage,
  trust: (address: string, hop: number) => boolean,
  maxBytes: number,
): string {
  let address = req.socket.remoteAddress ?? 'unknown';
  let header = req.headers['x-forwarded-for'];
  if (Array.isArray(header)) header = header.join(',');
  if (!header) return address;
  if (header.length > maxBytes) {
    // The last bytes only, from the first whole entry in them.
    header = header.slice(header.length - maxBytes);
    const comma = header.indexOf(',');
    header = comma < 0 ? '' : header.slice(comma + 1);
  }
  let end = header.length;
  for (let hop = 0; trust(address, hop); hop += 1) {
    if (end <= 0) return address;
    const comma = header.lastIndexOf(',', end - 1);
    const entry = header.slice(comma + 1, end).trim();
    end = comma;
    const next = entry.length <= MAX_ADDRESS_LENGTH ? ipOf(entry) : undefined;
    // A hop that passed on what is not an address: it is the client we know.
    if (next === undefined) return address;
    address = next;
  }
  return address;
}

/** `entry` as an IP address in a string of its own (not a slice of the header), or undefined. */
function ipOf(entry: string): string | undefined {
  const bare = entry.startsWith('[') && entry.endsWith(']') ? entry.slice(1, -1) : entry;
  if (isIP(bare) === 0) return undefined;
  // A copy: a slice would keep the whole header alive for as long as the address is a key.
  return Buffer.from(bare, 'latin1').toString('latin1');
}

export type HostOf = (req: IncomingMessage) => string | undefined;

/**
 * Express's `req.host`: `X-Forwarded-Host` (its first value) when the peer
 * is a trusted proxy, else `Host`; undefined when neither is there.
 */
export function clientHost(trustProxy: Config['trustProxy']): HostOf {
  const trust = trustProxy === false ? () => false : compileTrust(trustProxy);
  return (req) => {
    // A string: Node joins a repeated X-Forwarded-Host with ", ".
    let host = req.headers['x-forwarded-host'] as string | undefined;
    if (!host || !trust(req.socket.remoteAddress ?? '', 0)) host = req.headers.host;
    else if (host.includes(',')) host = host.slice(0, host.indexOf(',')).trimEnd();
    return host || undefined;
  };
}

/** Express's `compileTrust`: `true`, a hop count, or a list of addresses and names. */
export function compileTrust(
  value: true | number | string,
): (address: string, hop: number) => boolean {
  if (value === true) return () => true;
  if (typeof value === 'number') return (_address, hop) => hop < value;
  return proxyAddr.compile(value.split(',').map((part) => part.trim()));
}
