/**
 * Whether the store takes writes, judged from the outcome of the sends'
 * real appends: `/health` writes nothing of its own.
 *
 * Only `StoreUnavailableError` counts as a failure (what answers 503).
 *
 * A store can read well and write nothing (a full disk, a write lock held
 * elsewhere), so a probe that reads, or one good `/history`, says nothing
 * about sends. Here the latest append decides: after a failure (or an
 * append still unsettled past `timeoutMs`) the store counts as failing until
 * an append succeeds, or until `windowMs` passes with no new failure, so
 * that a process a balancer took out of service, and that therefore gets no
 * sends, is tried again.
 */
import { type MessageStore, StoreUnavailableError } from '../store/store.ts';

export interface WriteHealthOptions {
  /** An append unsettled for longer than this counts as failed (`STORE_TIMEOUT_MS`). */
  timeoutMs: number;
  /** How long a failure counts without a success after it (`HEALTH_WRITE_WINDOW_MS`). */
  windowMs: number;
  now?: () => number;
}

export class WriteHealth {
  readonly #timeoutMs: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  /** When each unsettled append started, oldest first (a Map keeps insertion order). */
  readonly #pending = new Map<number, number>();
  #nextId = 0;
  #failedAt = Number.NEGATIVE_INFINITY;

  constructor(options: WriteHealthOptions) {
    this.#timeoutMs = options.timeoutMs;
    this.#windowMs = options.windowMs;
    this.#now = options.now ?? Date.now;
  }

  /** True while the latest writes fail: `/health` then answers 503. */
  get failing(): boolean {
    const now = this.#now();
    const oldest = this.#pending.values().next();
    if (!oldest.done && now - oldest.value > this.#timeoutMs) return true;
    return now - this.#failedAt < this.#windowMs;
  }

  /** Records the outcome of `append`, and passes it on unchanged. */
  record<T>(append: Promise<T>): Promise<T> {
    const id = ++this.#nextId;
    this.#pending.set(id, this.#now());
    append.then(
      () => {
        this.#pending.delete(id);
        this.#failedAt = Number.NEGATIVE_INFINITY;
      },
      (error: unknown) => {
        this.#pending.delete(id);
        // A refused message (a bug, a bad input) says nothing about the store.
        if (error instanceof StoreUnavailableError) this.#failedAt = this.#now();
      },
    );
    return append;
  }

  /** `store`, with each append's outcome recorded here; every other call passes straight through. */
  track(store: MessageStore): MessageStore {
    const tracked: MessageStore = {
      kind: store.kind,
      get gapGraceMs() {
        return store.gapGraceMs;
      },
      init: () => store.init(),
      append: (input) => this.record(store.append(input)),
      after: (room, since, limit) => store.after(room, since, limit),
      before: (room, before, limit) => store.before(room, before, limit),
      heads: (rooms) => store.heads(rooms),
      prune: (policy) => store.prune(policy),
      pruned: (room) => store.pruned(room),
      ping: () => store.ping(),
      close: () => store.close(),
    };
    const { othersWrote } = store;
    if (othersWrote) tracked.othersWrote = () => othersWrote.call(store);
    return tracked;
  }
}
