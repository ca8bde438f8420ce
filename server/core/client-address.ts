/**
 * The client's address and the host it asked for, the same ones Express gives
 * as `req.ip` and `req.host`, for code that runs before Express (the lanes,
 * `lane.ts`). Behind a proxy, `TRUST_PROXY` says which hops may name the
 * visitor in `X-Forwarded-For` and the host in `X-Forwarded-Host`; the rule
 * is Express's own (its `trust proxy` setting), applied with the same library.
 */
import type { IncomingMessage } from 'node:http';
import proxyAddr from 'proxy-addr';
import type { Config } from './config.ts';

export type AddressOf = (req: IncomingMessage) => string;

export function clientAddress(trustProxy: Config['trustProxy']): AddressOf {
  if (trustProxy === false) return (req) => req.socket.remoteAddress ?? 'unknown';
  const trust = compileTrust(trustProxy);
  return (req) => proxyAddr(req, trust);
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
