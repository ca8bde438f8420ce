/**
 * Retention: the store is bounded out of the box (docs/design.md, "Limits").
 * Every `RETENTION_INTERVAL_MS` this process asks its store to delete the
 * messages older than `RETENTION_DAYS` and, in the rooms it wrote to since
 * the last run, those past the newest `RETENTION_PER_ROOM`: at most
 * `RETENTION_BATCH` rows a run, so a run stays short for the database and
 * a backlog (a first start on an old file) goes down a batch at a time.
 *
 * Only an append grows a room, so looking at the rooms written to is enough
 * for the count; every process runs it for its own writes, and deleting
 * twice is harmless. A cursor behind what was deleted is told so
 * (`MessageStore.pruned`, `expired` in protocol.ts).
 */
import { EventEmitter } from 'node:events';
import type { Config } from '../core/config.ts';
import type { Log } from '../core/log.ts';
import type { MessageStore } from './store.ts';

export type RetentionConfig = Pick<
  Config,
  'retentionDays' | 'retentionPerRoom' | 'retentionIntervalMs' | 'retentionBatch'
>;

const DAY_MS = 86_400_000;

/** Emits `ran` with the rows deleted after each run. */
export class Retention extends EventEmitter<{ ran: [deleted: number] }> {
  readonly #store: MessageStore;
  readonly #config: RetentionConfig;
  readonly #log: Log;
  /** Rooms appended to since the last run. */
  #rooms = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<number> | undefined;
  #closed = false;

  constructor(store: MessageStore, config: RetentionConfig, log: Log) {
    super();
    this.#store = store;
    this.#config = config;
    this.#log = log;
  }

  /** Whether any bound is on (`RETENTION_DAYS` or `RETENTION_PER_ROOM` not 0). */
  get enabled(): boolean {
    return this.#config.retentionDays > 0 || this.#config.retentionPerRoom > 0;
  }

  /**
   * Has `store`'s appends note their room: `store` is the chat's own
   * wrapper (write-health.ts, \`track\`), a plain object, so its \`append\`
   * is replaced in place.
   */
  track(store: MessageStore): MessageStore {
    const append = store.append;
    store.append = (input) => {
      this.note(input.room);
      return append(input);
    };
    return store;
  }

  /** `room` was appended to: its count is looked at in the next run. */
  note(room: string): void {
    if (this.enabled) this.#rooms.add(room);
  }

  /** Runs now, then every interval (sooner while a run finds a full batch to delete). */
  start(): void {
    if (this.enabled) this.#schedule(0);
  }

  /** One run: the rows it deleted. Runs do not overlap. */
  run(): Promise<number> {
    this.#running ??= this.#run().then((deleted) => {
      this.#running = undefined;
      this.emit('ran', deleted);
      return deleted;
    });
    return this.#running;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#running?.catch(() => {});
  }

  async #run(): Promise<number> {
    const { retentionDays, retentionPerRoom, retentionBatch } = this.#config;
    // At most a batch of rooms a run, as of rows: the rest wait for the next.
    const rooms = [...this.#rooms].slice(0, retentionBatch);
    for (const room of rooms) this.#rooms.delete(room);
    try {
      const deleted = await this.#store.prune({
        // Off by age: a time before any message.
        olderThan: new Date(retentionDays > 0 ? Date.now() - retentionDays * DAY_MS : 0),
        keepPerRoom: retentionPerRoom > 0 ? retentionPerRoom : Number.MAX_SAFE_INTEGER,
        rooms: retentionPerRoom > 0 ? rooms : [],
        maxRows: retentionBatch,
      });
      // A full batch may have left some of these rooms over their count.
      if (deleted >= retentionBatch) for (const room of rooms) this.#rooms.add(room);
      return deleted;
    } catch (error) {
      // The store is down or busy: the rooms are looked at again next time.
      for (const room of rooms) this.#rooms.add(room);
      this.#log('warn', 'retention: deleting old messages failed', error);
      return 0;
    }
  }

  #schedule(ms: number): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      void this.run().then((deleted) => {
        // A full batch: more is waiting. A short pause lets the writes through.
        const { retentionBatch } = this.#config;
        const full = deleted >= retentionBatch || this.#rooms.size >= retentionBatch;
        this.#schedule(
          full
            ? Math.min(1_000, this.#config.retentionIntervalMs)
            : this.#config.retentionIntervalMs,
        );
      });
    }, ms);
    this.#timer.unref();
  }
}
