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
 *
 * `track` is also the one writer of the store's up/down state
 * (server/metrics/outage.ts): every store call the chat serves from goes
 * through it, so it tells the state of each call's outcome, the hub's sends
 * and reads, `/history` and `/health` alike.
 */
import { type DeadlineTimers, raceDeadline } from '../core/deadline.ts';
import { type MessageStore, StoreUnavailableError } from '../store/store.ts';
import type { OutageState } from './outage.ts';

export interface WriteHealthOptions {
  /** An append unsettled for longer than this counts as failed (`STORE_TIMEOUT_MS`). */
  timeoutMs: number;
  /** How long a failure counts without a success after it (`HEALTH_WRITE_WINDOW_MS`). */
  windowMs: number;
  now?: () => number;
  /** The timers of the calls' deadline: the process's, or a test's clock (server/hub/clock.ts). */
  timers?: DeadlineTimers | undefined;
}

export class WriteHealth {
  readonly #timeoutMs: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  readonly #timers: DeadlineTimers | undefined;
  /** When each unsettled append started, oldest first (a Map keeps insertion order). */
  readonly #pending = new Map<number, number>();
  #nextId = 0;
  #failedAt = Number.NEGATIVE_INFINITY;

  constructor(options: WriteHealthOptions) {
    this.#timeoutMs = options.timeoutMs;
    this.#windowMs = options.windowMs;
    this.#now = options.now ?? Date.now;
    this.#timers = options.timers;
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

  /**
   * `store`, with each append's outcome recorded here and, when `state` is
   * given, the outcome of each call the chat serves from (append, after,
   * before, heads, pruned, ping) told to it: `ok()` when the call succeeds,
   * `failed(error)` when it rejects with `StoreUnavailableError` or is still
   * unsettled at `timeoutMs` (the deadline the callers race, `STORE_TIMEOUT_MS`:
   * a call they gave up on takes the store down). Other errors say nothing
   * about the store. A call is told once: a late answer after its deadline is
   * not. `init`, `prune` (retention, which logs its own failures), `close` and
   * `othersWrote` (a failure is "look anyway") pass straight through.
   */
  track(store: MessageStore, state?: OutageState): MessageStore {
    const told = <T>(work: Promise<T>, what: string): Promise<T> =>
      state ? this.#tell(state, work, what) : work;
    const tracked: MessageStore = {
      kind: store.kind,
      get gapGraceMs() {
        return store.gapGraceMs;
      },
      init: () => store.init(),
      append: (input) => told(this.record(store.append(input)), 'Storing the message'),
      after: (room, since, limit) =>
        told(store.after(room, since, limit), `Reading ${room} after #${since}`),
      before: (room, before, limit) =>
        told(store.before(room, before, limit), `Reading ${room} before #${before ?? 'the end'}`),
      heads: (rooms) => told(store.heads(rooms), 'Reading the heads'),
      prune: (policy) => store.prune(policy),
      pruned: (room) => told(store.pruned(room), `Reading how far ${room} has expired`),
      ping: () => told(store.ping(), 'Pinging the store'),
      close: () => store.close(),
    };
    const { othersWrote } = store;
    if (othersWrote) tracked.othersWrote = () => othersWrote.call(store);
    return tracked;
  }

  /**
   * `work`, settling as it does, but only once `state` has heard of it, so
   * that a caller reading `state.up` right after (`/health`) sees this call.
   */
  #tell<T>(state: OutageState, work: Promise<T>, what: string): Promise<T> {
    const ms = this.#timeoutMs;
    const late = () => new StoreUnavailableError(`${what} took longer than ${ms} ms`);
    return raceDeadline(work, ms, late, this.#timers).then(
      (value) => {
        state.ok();
        return value;
      },
      (error: unknown) => {
        if (error instanceof StoreUnavailableError) state.failed(error);
        // Its own outcome, however late: the callers answer their own deadline.
        return work;
      },
    );
  }
}
