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
 * The list of names (`people()`) is held by the same bucket: a join changes
 * both at one token, and a rename or a change of the listed names alone
 * spends one too, so a churning room's list does not wake its polls more
 * often than its count would. The one exception: a shared view (several
 * processes) counts a new client at once but names it a sync later, a few
 * milliseconds on, and drops a leaver from its count before its list. When
 * the list shown with a new count lags it so, the list that catches up is
 * the same join or leave and rides on its token. So a join costs one token
 * with one process or many, and a room's polls are woken at most twice per
 * token.
 *
 * Wraps any presence (local, cluster, Redis): touches and leaves go through
 * as they are; only `count()` and `people()` are held. Bounded: at most `maxRooms` rooms are
 * kept (the least recently read is dropped, and starts afresh).
 */
import { limits, type People } from '../../protocol/protocol.ts';
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
  /** The list shown with it; undefined until asked. */
  people: People | undefined;
  /** The count changed and its list lags it: the list's next change rides on that token. */
  listOwed: boolean;
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
    const refresh = inner.refresh?.bind(inner);
    if (refresh) this.refresh = refresh;
  }

  touch(room: string, client: string, nickname?: string, addressOf?: () => string): boolean {
    return this.#inner.touch(room, client, nickname, addressOf);
  }

  leave(room: string, client: string): void {
    this.#inner.leave(room, client);
  }

  /** Present when the inner presence has it (a shared view). */
  readonly refresh?: (rooms: readonly string[], fresh?: boolean) => Promise<void>;

  onRename(listener: (room: string) => void): void {
    this.#inner.onRename?.(listener);
  }

  count(room: string): number {
    const value = this.#inner.count(room);
    const { burst, changeMs, maxRooms } = this.#options;
    if (changeMs === 0) return value;
    const now = this.#now();
    let shown = this.#rooms.get(room);
    if (shown) this.#rooms.delete(room);
    else {
      shown = { value, people: undefined, listOwed: false, tokens: burst, at: now };
      if (this.#rooms.size >= maxRooms)
        this.#rooms.delete(this.#rooms.keys().next().value as string);
    }
    this.#rooms.set(room, shown);
    if (shown.value === value) return value;
    if (!this.#spend(shown, now)) return shown.value;
    shown.value = value;
    // The list changes with the count, at the same token, and may change
    // once more on it if it lags the count (a shared view's nicknames come a
    // sync later).
    if (shown.people !== undefined) {
      shown.people = this.#inner.people(room);
      shown.listOwed = lags(shown.people, value);
    }
    return value;
  }

  people(room: string): People {
    this.count(room);
    const list = this.#inner.people(room);
    const shown = this.#rooms.get(room);
    if (!shown || this.#options.changeMs === 0) return list;
    if (shown.people === undefined || shown.people.version === list.version) {
      shown.people = list;
      return list;
    }
    if (shown.listOwed || this.#spend(shown, this.#now())) {
      shown.listOwed = false;
      shown.people = list;
    }
    return shown.people;
  }

  /** Takes a token from the room's bucket, if it has one. */
  #spend(shown: Shown, now: number): boolean {
    const { burst, changeMs } = this.#options;
    shown.tokens = Math.min(burst, shown.tokens + (now - shown.at) / changeMs);
    shown.at = now;
    if (shown.tokens < 1) return false;
    shown.tokens -= 1;
    return true;
  }

  close(): Promise<void> {
    this.#rooms.clear();
    return this.#inner.close();
  }
}

/**
 * Whether `people` does not yet name the clients `online` counts: it names
 * more of them than there are (a leaver still listed), or counts some only
 * in `more` though the list has room for their names (a newcomer not named
 * yet). A list at its cap counts the rest in `more` by design.
 */
function lags(people: People, online: number): boolean {
  return (
    people.names.length > online ||
    (people.more > 0 && people.names.length < limits.maxPeopleListed)
  );
}
