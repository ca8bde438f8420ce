/**
 * The stored-bytes budget: how much text one client address may have stored
 * per hour (`SEND_KB_PER_HOUR`), beside the send rate. The rate counts
 * messages; at the rate's default a stranger could store 2,000-character
 * messages, several megabytes an hour, which retention would keep for its
 * days. Charged before the store is asked, for the text and nickname of
 * each send the rate let through.
 *
 * Shared fairly behind one address: each person (the send's `client` id;
 * without one, the address's anonymous share) may store at most
 * `SEND_KB_PER_HOUR_PER_CLIENT` of it, so one neighbour behind a NAT who
 * sends long messages uses up its own share, not the whole address's
 * (docs/design.md, "Fair shares behind one address").
 *
 * Counted in this process, in a fixed window of an hour: with several
 * processes an address may store that much in each. The table of addresses
 * has a bound (`maxAddresses`): past it the oldest address counted is
 * forgotten, so a flood of addresses costs memory up to the bound only.
 */
import type { IncomingMessage } from 'node:http';
import type { AddressOf } from '../core/client-address.ts';
import { httpError } from '../core/errors.ts';

const HOUR_MS = 3_600_000;

export interface ByteBudgetOptions {
  kbPerHour: number;
  /** Each person's share of it; 0: none, the address's budget alone. @default 0 */
  kbPerHourPerClient?: number;
  addressOf: AddressOf;
  /** Addresses counted at once, at most. @default 100000 */
  maxAddresses?: number;
  now?: () => number;
}

export class ByteBudget {
  readonly #bytes: number;
  readonly #personBytes: number;
  readonly #addressOf: AddressOf;
  readonly #maxAddresses: number;
  readonly #now: () => number;
  #windowStart: number;
  /** Bytes charged per address in the current window; insertion order is age. */
  #used = new Map<string, number>();
  /** Bytes charged per person (address and client id) in the current window, likewise. */
  #people = new Map<string, number>();

  constructor(options: ByteBudgetOptions) {
    this.#bytes = options.kbPerHour * 1024;
    this.#personBytes = (options.kbPerHourPerClient ?? 0) * 1024;
    this.#addressOf = options.addressOf;
    this.#maxAddresses = options.maxAddresses ?? 100_000;
    this.#now = options.now ?? Date.now;
    this.#windowStart = this.#now();
  }

  /**
   * Charges `bytes` to the request's person (`client`, or its address's
   * anonymous share) and address; throws 429 `storage_limited` past either,
   * and then charges neither.
   */
  charge(req: IncomingMessage, bytes: number, client?: string): void {
    const now = this.#now();
    if (now - this.#windowStart >= HOUR_MS) {
      this.#windowStart = now;
      this.#used = new Map();
      this.#people = new Map();
    }
    const address = this.#addressOf(req);
    const used = (this.#used.get(address) ?? 0) + bytes;
    const person = `${address}|${client ?? ''}`;
    const personUsed = (this.#people.get(person) ?? 0) + bytes;
    if (used > this.#bytes || (this.#personBytes > 0 && personUsed > this.#personBytes)) {
      const retryAfter = Math.max(1, Math.ceil((this.#windowStart + HOUR_MS - now) / 1000));
      throw httpError('storage_limited', undefined, { retryAfter });
    }
    this.#count(this.#used, address, used);
    if (this.#personBytes > 0) this.#count(this.#people, person, personUsed);
  }

  /** Sets `key`'s count in `table`, forgetting its oldest key past the bound. */
  #count(table: Map<string, number>, key: string, value: number): void {
    if (!table.has(key) && table.size >= this.#maxAddresses) {
      table.delete(table.keys().next().value!);
    }
    table.set(key, value);
  }

  /** Addresses counted now (for the tests of the bound). */
  get size(): number {
    return this.#used.size;
  }
}
