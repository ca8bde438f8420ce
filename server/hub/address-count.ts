/**
 * Fair share: one client address holds at most `limit` waiting polls.
 *
 * Addresses are counted only while the process holds enough polls for one
 * address to reach its limit: from the moment it holds `limit` polls until it
 * holds fewer than half of that. Below `limit` polls in all no address can be
 * at its limit, so none is read: reading one is a system call (getpeername)
 * per connection, a visible share of the server's CPU in a large fan-out
 * (docs/design.md, "The hub"). While counting, every waiting poll is counted.
 */

/** A waiting poll as counted here: its address is read once, when counting starts or it arrives. */
export interface Counted<R> {
  readonly reply: R;
  address: string | undefined;
}

export class AddressCount<R> {
  readonly #limit: number;
  readonly #addressOf: (reply: R) => string;
  #byAddress: Map<string, number> | undefined;

  /** `limit` 0: no limit, and no address is ever read. */
  constructor(limit: number, addressOf: (reply: R) => string) {
    this.#limit = limit;
    this.#addressOf = addressOf;
  }

  /**
   * The address a new poll from `reply` counts under, or undefined while
   * polls are not counted. Counting starts here, when `held` (every waiting
   * poll) reaches the limit: each one's address is read then, once.
   */
  toCount(reply: R, held: Iterable<Counted<R>>, size: number): string | undefined {
    const limit = this.#limit;
    if (limit === 0) return undefined;
    if (this.#byAddress === undefined) {
      if (size < limit) return undefined;
      const byAddress = new Map<string, number>();
      for (const poll of held) {
        poll.address ??= this.#addressOf(poll.reply);
        byAddress.set(poll.address, (byAddress.get(poll.address) ?? 0) + 1);
      }
      this.#byAddress = byAddress;
    }
    return this.#addressOf(reply);
  }

  /** Whether `address` (from `toCount`) holds its limit already. */
  full(address: string | undefined): boolean {
    if (address === undefined || this.#byAddress === undefined) return false;
    return (this.#byAddress.get(address) ?? 0) >= this.#limit;
  }

  add(address: string | undefined): void {
    const byAddress = this.#byAddress;
    if (address !== undefined && byAddress !== undefined) {
      byAddress.set(address, (byAddress.get(address) ?? 0) + 1);
    }
  }

  /** A counted poll ended; `size` is how many wait now, without it. */
  remove(poll: Counted<R>, size: number): void {
    const byAddress = this.#byAddress;
    if (byAddress === undefined) return;
    if (size < this.#limit / 2) {
      this.#byAddress = undefined;
      return;
    }
    // Kept, not read again: behind a proxy, reading it parses
    // X-Forwarded-For, and this runs for every answered poll.
    const address = poll.address!;
    release(byAddress, address);
  }
}

/** One fewer held under `key`; a key that holds none is dropped, so the table stays as small as what is held. */
export function release(counts: Map<string, number>, key: string): void {
  const held = (counts.get(key) ?? 1) - 1;
  if (held > 0) counts.set(key, held);
  else counts.delete(key);
}
