/**
 * Leader election through the Web Locks API: the tab that holds the room's
 * lock leads. The others wait in the lock's queue, and the browser grants it
 * to the next one as soon as the leader releases it, closes or crashes, so a
 * failover costs no timeout at all.
 *
 * - A handover is a steal (`steal: true`): the new leader gets the lock at
 *   once, and the old one's request rejects with an `AbortError`, which is
 *   how it learns it was deposed.
 * - Each request has a ticket. A grant for a request that was given up
 *   meanwhile (withdrawn, or replaced by a steal) is released at once.
 *
 * See https://developer.mozilla.org/docs/Web/API/Web_Locks_API
 */
import type { Election, ElectionEvents } from './election.ts';

export class LockElection implements Election {
  #standing = false;
  #ticket = 0;
  /** The ticket of the request that holds the lock, if one does. */
  #held: number | undefined;
  #release: (() => void) | undefined;
  #queued: AbortController | undefined;
  readonly #locks: LockManager;
  readonly #name: string;
  readonly #events: ElectionEvents;

  constructor(locks: LockManager, name: string, events: ElectionEvents) {
    this.#locks = locks;
    this.#name = name;
    this.#events = events;
  }

  get leading(): boolean {
    return this.#held !== undefined;
  }

  stand(): void {
    if (this.#standing) return;
    this.#standing = true;
    this.#request(false);
  }

  withdraw(): void {
    this.#standing = false;
    this.#giveUpQueued();
    this.#release?.();
  }

  seize(): void {
    this.#standing = true;
    if (this.leading) return;
    this.#giveUpQueued();
    this.#request(true);
  }

  close(): void {
    this.withdraw();
  }

  #giveUpQueued(): void {
    this.#ticket += 1;
    this.#queued?.abort();
    this.#queued = undefined;
  }

  #request(steal: boolean): void {
    this.#ticket += 1;
    const ticket = this.#ticket;
    // A steal cannot be aborted (the API refuses `signal` with `steal`): it is granted at once.
    const queued = steal ? undefined : new AbortController();
    this.#queued = queued;
    const options: LockOptions = queued ? { signal: queued.signal } : { steal: true };
    const ended = () => {
      if (this.#held !== ticket) return;
      this.#held = undefined;
      this.#release = undefined;
      this.#events.onDeposed();
      if (this.#standing) this.#request(false);
    };
    this.#locks
      .request(this.#name, options, () => {
        if (ticket !== this.#ticket) return undefined; // Given up meanwhile: release at once.
        this.#queued = undefined;
        this.#held = ticket;
        return new Promise<void>((resolve) => {
          this.#release = resolve;
          this.#events.onElected();
        });
      })
      .then(ended, ended);
  }
}
