/**
 * Every waiting poll, in deadline order, and the one timer that serves them
 * all. All polls share one timeout, so the order they were added is the
 * order they expire in (insertion order of a Set): the timer is armed for
 * the head only, never one timer per poll (docs/design.md, "The hub").
 */
import type { Clock, Timer } from './clock.ts';

export class DeadlineQueue<T extends { readonly deadline: number }> {
  readonly #items = new Set<T>();
  readonly #clock: Clock;
  /** Called with the time when the head's deadline passed; it removes what is due. */
  readonly #onDue: (now: number) => void;
  #timer: Timer | undefined;

  constructor(clock: Clock, onDue: (now: number) => void) {
    this.#clock = clock;
    this.#onDue = onDue;
  }

  get size(): number {
    return this.#items.size;
  }

  /** Oldest first. Deleting the current item while iterating is safe. */
  values(): IterableIterator<T> {
    return this.#items.values();
  }

  add(item: T): void {
    this.#items.add(item);
    if (this.#timer === undefined) this.#arm();
  }

  delete(item: T): void {
    this.#items.delete(item);
    if (this.#items.size === 0) this.stop();
  }

  /** No timer runs until the next `add`. */
  stop(): void {
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    const head = this.#items.values().next().value;
    if (!head) return;
    this.#timer = this.#clock.setTimeout(
      () => this.#fire(),
      Math.max(0, head.deadline - this.#clock.now()),
    );
    this.#timer.unref();
  }

  #fire(): void {
    this.#timer = undefined;
    this.#onDue(this.#clock.now());
    if (this.#items.size > 0 && this.#timer === undefined) this.#arm();
  }
}
