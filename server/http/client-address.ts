/**
 * The client's address, the same one Express gives as `req.ip`, for code that
 * runs before Express (the long-poll lane). Behind a proxy, `TRUST_PROXY`
 * says which hops may name the visitor in `X-Forwarded-For`; the rule is
 * Express's own (its `trust proxy` setting), applied with the same library.
 */
import type { IncomingMessage } from 'node:http';
import proxyAddr from 'proxy-addr';
import type { Config } from '../config.ts';

export type AddressOf = (req: IncomingMessage) => string;

export function clientAddress(trustProxy: Config['trustProxy']): AddressOf {
  if (trustProxy === false) return (req) => req.socket.remoteAddress ?? 'unknown';
  const trust = compileTrust(trustProxy);
  return (req) => proxyAddr(req, trust);
}

/** Express's `compileTrust`: `true`, a hop count, or a list of addresses and names. */
function compileTrust(value: true | number | string): (address: string, hop: number) => boolean {
  if (value === true) return () => true;
  if (typeof value === 'number') return (_address, hop) => hop < value;
  return proxyAddr.compile(value.split(',').map((part) => part.trim()));
}
