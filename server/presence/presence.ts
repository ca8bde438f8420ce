/**
 * Who is in a room: the `online` count of every `/recv` answer.
 *
 * A client (one browser, by the random `client` id its tabs share) counts as
 * online while it has polled within the poll timeout plus a grace period: a
 * tab that waits 25 s for a message and polls again at once never drops out.
 * A client whose waiting poll is closed by the client itself (tab closed,
 * page left) is removed at once, so the count falls without waiting.
 *
 * Each client is listed under the nickname its last poll carried (or
 * `Anonymous`): `people(room)` is the room's list (people.ts), whose version
 * changes whenever a client comes, goes or changes its nickname.
 */
import type { People } from '../../protocol/protocol.ts';
import { DEFAULT_NICKNAME, fairNames, peopleOf } from './people.ts';

export interface Presence {
  /**
   * The client is polling the room now, as `nickname` (undefined: Anonymous).
   * True when the room had not seen it (within the window). `addressOf`
   * gives the poll's client address; it is read only when the client is
   * new to the room (the list names at most a few clients per address).
   */
  touch(room: string, client: string, nickname?: string, addressOf?: () => string): boolean;
  /** The client closed its waiting poll: it left. */
  leave(room: string, client: string): void;
  /** Clients of the room seen within the window. Synchronous: it is read for every answer. */
  count(room: string): number;
  /** The room's list of nicknames, capped (people.ts). Synchronous, like `count`. */
  people(room: string): People;
  /**
   * Only a view shared by several processes has it: asks the shared view
   * for these rooms' counts now, if its copy is older than its cache period,
   * and resolves once that answer is in (or failed), so the `count` and
   * `people` read next are that fresh. Never rejects. `fresh`: ask
   * whatever the copy's age, once this process's own changes are sent (a
   * rename, to be shown everywhere at once).
   */
  refresh?(rooms: readonly string[], fresh?: boolean): Promise<void>;
  /**
   * Called with the room whenever a client it already counted polls under
   * another nickname (a rename): the hub then wakes the room's polls at once
   * rather than at the next presence notice.
   */
  onRename?(listener: (room: string) => void): void;
  close(): Promise<void>;
}

/** The list of a room where nobody polls. */
const NOBODY: People = Object.freeze(peopleOf([], 0)) as People;

/**
 * Presence kept in this process's memory. Bounded: rooms are kept in
 * last-touched order, and every touch drops the oldest rooms whose clients
 * all fell out of the window (and, past `maxRooms`, the oldest room outright),
 * so strangers naming new rooms cannot grow it without bound.
 */
export class LocalPresence implements Presence {
  /** Rooms in last-touched order; each room's clients in last-seen order. */
  readonly #rooms = new Map<string, Map<string, number>>();
  /** When each room was last touched (the newest of its clients). */
  readonly #touchedAt = new Map<string, number>();
  /** Each room's nicknames by client, for the clients that gave one. */
  readonly #names = new Map<string, Map<string, string>>();
  /** Each room's client addresses, by client, as their first poll came. */
  readonly #addresses = new Map<string, Map<string, string>>();
  /** Each room's list, built when asked after a change: a quiet room builds it once. */
  readonly #lists = new Map<string, People>();
  #onRename: (room: string) => void = () => {};

  /**
   * @param windowMs poll timeout plus grace.
   * @param now clock, for tests of expiry.
   * @param maxRooms rooms kept at most.
   * @param namesPerAddress names from one client address the list shows at
   *   most (the rest are counted in `more`), so a flood of client ids from
   *   one address cannot push the others out of it; 0: no cap.
   */
  constructor(
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxRooms = 10_000,
    private readonly namesPerAddress = 3,
  ) {}

  /** Rooms held (for tests and metrics). */
  get rooms(): number {
    return this.#rooms.size;
  }

  touch(room: string, client: string, nickname?: string, addressOf?: () => string): boolean {
    const now = this.now();
    let clients = this.#rooms.get(room);
    if (clients) this.#rooms.delete(room);
    else clients = new Map();
    this.#rooms.set(room, clients);
    this.#touchedAt.set(room, now);
    // Delete first so the map stays in last-seen order: the oldest entries come first.
    const seen = clients.get(client);
    clients.delete(client);
    clients.set(client, now);
    if (seen === undefined && addressOf !== undefined) {
      let addresses = this.#addresses.get(room);
      if (!addresses) {
        addresses = new Map();
        this.#addresses.set(room, addresses);
      }
      addresses.set(client, addressOf());
    }
    this.#name(room, client, nickname, seen === undefined);
    this.#dropStale(now);
    return seen === undefined || seen < now - this.windowMs;
  }

  onRename(listener: (room: string) => void): void {
    this.#onRename = listener;
  }

  /** The client address the client first polled the room from, if it was told. */
  addressIn(room: string, client: string): string | undefined {
    return this.#addresses.get(room)?.get(client);
  }

  leave(room: string, client: string): void {
    const clients = this.#rooms.get(room);
    if (clients?.delete(client)) this.#unname(room, client);
    if (clients?.size === 0) this.#forget(room);
  }

  count(room: string): number {
    const clients = this.#rooms.get(room);
    if (!clients) return 0;
    const oldest = this.now() - this.windowMs;
    // Entries are in last-seen order, so expiry stops at the first fresh one.
    for (const [client, seen] of clients) {
      if (seen >= oldest) break;
      clients.delete(client);
      this.#unname(room, client);
    }
    if (clients.size === 0) this.#forget(room);
    return clients.size;
  }

  people(room: string): People {
    const online = this.count(room);
    // Read for every answer: a room nobody polls with a client id costs no list.
    if (online === 0) return NOBODY;
    let list = this.#lists.get(room);
    if (list === undefined) {
      const clients = this.#rooms.get(room);
      const names = this.#names.get(room);
      const addresses = this.#addresses.get(room);
      const entries: Array<[string, string | undefined]> = [];
      for (const client of clients?.keys() ?? []) {
        entries.push([names?.get(client) ?? DEFAULT_NICKNAME, addresses?.get(client)]);
      }
      list = peopleOf(fairNames(entries, this.namesPerAddress), online);
      if (clients) this.#lists.set(room, list);
    }
    return list;
  }

  async close(): Promise<void> {
    this.#rooms.clear();
    this.#touchedAt.clear();
    this.#names.clear();
    this.#addresses.clear();
    this.#lists.clear();
  }

  /** Notes the client's nickname; the list is built again only if it changed. */
  #name(room: string, client: string, nickname: string | undefined, arrived: boolean): void {
    let names = this.#names.get(room);
    const before = names?.get(client);
    if (!arrived && before === nickname) return;
    if (nickname === undefined) names?.delete(client);
    else {
      if (!names) {
        names = new Map();
        this.#names.set(room, names);
      }
      names.set(client, nickname);
    }
    this.#lists.delete(room);
    if (!arrived) this.#onRename(room);
  }

  #unname(room: string, client: string): void {
    this.#names.get(room)?.delete(client);
    this.#addresses.get(room)?.delete(client);
    this.#lists.delete(room);
  }

  #forget(room: string): void {
    this.#rooms.delete(room);
    this.#addresses.delete(room);
    this.#touchedAt.delete(room);
    this.#names.delete(room);
    this.#lists.delete(room);
  }

  /** A touch's share of the clean-up: at most two of the least recently touched rooms. */
  #dropStale(now: number): void {
    const oldest = now - this.windowMs;
    let looked = 0;
    for (const room of this.#rooms.keys()) {
      if (looked++ >= 2) break;
      const touched = this.#touchedAt.get(room) ?? 0;
      if (touched >= oldest && this.#rooms.size <= this.maxRooms) break;
      this.#forget(room);
    }
  }
}
