/**
 * The online count a room shows changes only so often, whatever the churn.
 *
 * Every change of a room's count wakes its waiting polls (server/http/
 * waiters.ts, `notifyPresence`): each is answered and polls again. Clients
 * joining and leaving fast (one new `client` id a second did it) would wake
 * a whole room every `PRESENCE_NOTIFY_MS`. Here each room may change the
 * count it shows `burst` times in a row, then once per `changeMs` (a token
 * bucket): a quiet room shows a join within `PRESENCE_NOTIFY_MS` as before;
 * a churning one wakes its polls at most once per `changeMs`, and then
 * shows the count as it is at that moment.
 *
 * Wraps any presence (local, cluster, Redis): touches and leaves go through
 * as they are; only `count()` is held. Bounded: at most `maxRooms` rooms are
 * kept (the least recently read is dropped, and starts afresh).
 */
import type { Presence } from './presence.ts';

export interface SteadyCountOptions {
  burst: number;
  /** 0: every change shows at once (no spacing). */
  changeMs: number;
  maxRooms: number;
  now?: () => number;
}

interface Shown {
  value: number;
  tokens: number;
  at: number;
}

export class SteadyCount implements Presence {
  readonly #inner: Presence;
  readonly #options: SteadyCountOptions;
  readonly #now: () => number;
  readonly #rooms = new Map<string, Shown>();

  constructor(inner: Presence, options: SteadyCountOptions) {
    this.#inner = inner;
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  touch(room: string, client: string): boolean {
    return this.#inner.touch(room, client);
  }

  leave(room: string, client: string): void {
    this.#inner.leave(room, client);
  }

  count(room: string): number {
    const value = this.#inner.count(room);
    const { burst, changeMs, maxRooms } = this.#options;
    if (changeMs === 0) return value;
    const now = this.#now();
    let shown = this.#rooms.get(room);
    if (shown) this.#rooms.delete(room);
    else {
      shown = { value, tokens: burst, at: now };
      if (this.#rooms.size >= maxRooms)
        this.#rooms.delete(this.#rooms.keys().next().value as string);
    }
    this.#rooms.set(room, shown);
    if (shown.value === value) return value;
    shown.tokens = Math.min(burst, shown.tokens + (now - shown.at) / changeMs);
    shown.at = now;
    if (shown.tokens < 1) return shown.value;
    shown.tokens -= 1;
    shown.value = value;
    return value;
  }

  close(): Promise<void> {
    this.#rooms.clear();
    return this.#inner.close();
  }
}
