/**
 * Fair shares behind one address: each browser holds at most `limit`
 * waiting polls (`MAX_POLLS_PER_CLIENT`), so one neighbour behind a NAT
 * fills its own share, not the address's budget (`MAX_POLLS_PER_ADDRESS`,
 * `address-count.ts`, stays as the last line). docs/design.md, "Limits",
 * says what this holds against.
 *
 * - A poll with a `client` id counts under that id alone, with no address
 *   read: the presence cap has bound the id to the first address polling with it
 *   (server/presence/address-cap.ts), and a poll naming it from another
 *   address arrives here without it, so an id is one browser at one address.
 * - A poll the presence cap served without its id (past `PRESENCE_CLIENTS_PER_ADDRESS`,
 *   or naming an id another address holds) counts under its address and
 *   that id (`shareOf`, marked by the cap, which read the address already): the
 *   people of a big NAT past the presence cap keep a share each, and a
 *   stranger naming a victim's id fills a share of its own address.
 * - A poll without one (the 2011 client, curl) counts in its address's
 *   anonymous share. Addresses are read only while the process holds
 *   `limit` anonymous polls, as `address-count.ts` does for every poll:
 *   reading one is a system call.
 */
import { release } from './address-count.ts';

/** A waiting poll as counted here; `address` is read at most once, by whichever count needs it first. */
export interface Shared<R> {
  readonly reply: R;
  readonly client: string | undefined;
  address: string | undefined;
  /** The share it counts in, once admitted with a client id (its own, or `shareOf`'s). */
  share?: string | undefined;
}

export class ClientShare<R> {
  readonly #limit: number;
  readonly #addressOf: (reply: R) => string;
  readonly #shareOf: (reply: R) => string | undefined;
  readonly #byClient = new Map<string, number>();
  /** The anonymous polls held, so that counting them by address can start with them. */
  readonly #anonymous = new Set<Shared<R>>();
  #anonymousByAddress: Map<string, number> | undefined;

  /** `limit` 0: no share, nothing counted. */
  constructor(
    limit: number,
    addressOf: (reply: R) => string,
    shareOf: (reply: R) => string | undefined = () => undefined,
  ) {
    this.#limit = limit;
    this.#addressOf = addressOf;
    this.#shareOf = shareOf;
  }

  /** Counts `poll` in its share and says true, or says false when its share is full. */
  admit(poll: Shared<R>): boolean {
    const limit = this.#limit;
    if (limit === 0) return true;
    const share = poll.client ?? this.#shareOf(poll.reply);
    if (share !== undefined) {
      const held = this.#byClient.get(share) ?? 0;
      if (held >= limit) return false;
      this.#byClient.set(share, held + 1);
      poll.share = share;
      return true;
    }
    let byAddress = this.#anonymousByAddress;
    if (byAddress === undefined && this.#anonymous.size + 1 >= limit) {
      byAddress = new Map();
      for (const held of this.#anonymous) {
        held.address ??= this.#addressOf(held.reply);
        byAddress.set(held.address, (byAddress.get(held.address) ?? 0) + 1);
      }
      this.#anonymousByAddress = byAddress;
    }
    if (byAddress !== undefined) {
      poll.address ??= this.#addressOf(poll.reply);
      const held = byAddress.get(poll.address) ?? 0;
      if (held >= limit) return false;
      byAddress.set(poll.address, held + 1);
    }
    this.#anonymous.add(poll);
    return true;
  }

  /** An admitted poll ended. */
  remove(poll: Shared<R>): void {
    if (this.#limit === 0) return;
    const { share } = poll;
    if (share !== undefined) {
      poll.share = undefined;
      release(this.#byClient, share);
      return;
    }
    if (!this.#anonymous.delete(poll)) return;
    const byAddress = this.#anonymousByAddress;
    if (byAddress === undefined) return;
    if (this.#anonymous.size < this.#limit / 2) {
      this.#anonymousByAddress = undefined;
      return;
    }
    const address = poll.address!;
    release(byAddress, address);
  }
}
