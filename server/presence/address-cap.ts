/**
 * The online count cannot be inflated from one address: each client
 * address has at most `perAddress` client ids counted at once (within the
 * presence window). It sits in front of every presence (local, cluster,
 * Redis), asked by `GET /recv` once its query is parsed
 * (server/http/recv.ts), since a `Presence` is told a room and a client id
 * but not who sent them: a poll from an address already at its cap, naming
 * a client id not counted yet, is served as any poll but without its
 * `client`, so it is not counted online (`chat_presence_uncounted_total`).
 * Nothing rewrites the request: the poll's parsed query loses its `client`.
 *
 * The first address to poll with a client id holds it while it polls: a poll
 * naming the id from another address within the window is served uncounted
 * too, so a stranger who learnt a browser's id cannot rename it.
 *
 * Bounded: each address keeps at most `perAddress` ids, and at most
 * `maxAddresses` addresses (and as many client ids' holders) are kept (the
 * least recently seen is dropped).
 */
export interface PresenceCapOptions {
  perAddress: number;
  /** Poll timeout plus grace: how long an id stays counted after its last poll. */
  windowMs: number;
  maxAddresses?: number;
  now?: () => number;
}

/** Whether a poll from `address` naming `client` is counted online (the module comment). */
export type PresenceCap = (address: string, client: string) => boolean;

/** The cap (none when `perAddress` is 0) and the holders of client ids. */
export function createPresenceCap(options: PresenceCapOptions): PresenceCap {
  const { perAddress, windowMs } = options;
  const maxAddresses = options.maxAddresses ?? 100_000;
  const now = options.now ?? Date.now;
  /** Client id → the address that holds it and when it last polled; in last-seen order. */
  const holders = new Map<string, { address: string; at: number }>();

  /**
   * The first address to poll with a client id holds it while its polls go
   * on (within the window): a poll naming that id from another address is
   * served uncounted, so it cannot rename the browser nor make it leave.
   */
  function holds(address: string, client: string): boolean {
    const at = now();
    const holder = holders.get(client);
    if (holder && holder.address !== address && holder.at >= at - windowMs) return false;
    holders.delete(client);
    holders.set(client, { address, at });
    if (holders.size > maxAddresses) holders.delete(holders.keys().next().value as string);
    return true;
  }

  const admit = clientsPerAddress(perAddress, windowMs, maxAddresses, now);
  return (address, client) => holds(address, client) && admit(address, client);
}

/**
 * The per-address cap on its own (the cluster primary's, across workers):
 * `admit(address, client)` is true while the address has fewer than
 * `perAddress` client ids seen within `windowMs`, or already has this one.
 * Bounded like the edge's: at most `maxAddresses` addresses are kept.
 */
export function clientsPerAddress(
  perAddress: number,
  windowMs: number,
  maxAddresses = 100_000,
  now: () => number = Date.now,
): (address: string, client: string) => boolean {
  if (perAddress === 0) return () => true;
  const seen = new Map<string, Map<string, number>>();
  return (address, client) => {
    const at = now();
    let clients = seen.get(address);
    if (clients) seen.delete(address);
    else clients = new Map();
    seen.set(address, clients);
    if (seen.size > maxAddresses) seen.delete(seen.keys().next().value as string);
    for (const [id, last] of clients) {
      if (last >= at - windowMs) break;
      clients.delete(id);
    }
    if (!clients.has(client) && clients.size >= perAddress) return false;
    clients.delete(client);
    clients.set(client, at);
    return true;
  };
}
