/**
 * Who is in a room: the `online` count of every `/recv` answer.
 *
 * A client (one browser, by the random `client` id its tabs share) counts as
 * online while it has polled within the poll timeout plus a grace period: a
 * tab that waits 25 s for a message and polls again at once never drops out.
 * A client whose waiting poll is closed by the client itself (tab closed,
 * page left) is removed at once, so the count falls without waiting.
 */
export interface Presence {
  /** The client is polling the room now. True when the room had not seen it (within the window). */
  touch(room: string, client: string): boolean;
  /** The client closed its waiting poll: it left. */
  leave(room: string, client: string): void;
  /** Clients of the room seen within the window. Synchronous: it is read for every answer. */
  count(room: string): number;
  close(): Promise<void>;
}

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

  /**
   * @param windowMs poll timeout plus grace.
   * @param now clock, for tests of expiry.
   * @param maxRooms rooms kept at most.
   */
  constructor(
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxRooms = 10_000,
  ) {}

  /** Rooms held (for tests and metrics). */
  get rooms(): number {
    return this.#rooms.size;
  }

  touch(room: string, client: string): boolean {
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
    this.#dropStale(now);
    return seen === undefined || seen < now - this.windowMs;
  }

  leave(room: string, client: string): void {
    const clients = this.#rooms.get(room);
    clients?.delete(client);
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
    }
    if (clients.size === 0) this.#forget(room);
    return clients.size;
  }

  async close(): Promise<void> {
    this.#rooms.clear();
    this.#touchedAt.clear();
  }

  #forget(room: string): void {
    this.#rooms.delete(room);
    this.#touchedAt.delete(room);
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
