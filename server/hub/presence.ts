/**
 * Who is in a room: the `online` count of every `/recv` answer.
 *
 * A client (one browser tab, by the random `client` id it sends) counts as
 * online while it has polled within the poll timeout plus a grace period: a
 * tab that waits 25 s for a message and polls again at once never drops out.
 * A client whose waiting poll is closed by the client itself (tab closed,
 * page left) is removed at once, so the count falls without waiting.
 */
export interface Presence {
  /** The client is polling the room now. */
  touch(room: string, client: string): void;
  /** The client closed its waiting poll: it left. */
  leave(room: string, client: string): void;
  /** Clients of the room seen within the window. Synchronous: it is read for every answer. */
  count(room: string): number;
  close(): Promise<void>;
}

export class LocalPresence implements Presence {
  readonly #rooms = new Map<string, Map<string, number>>();

  /** @param windowMs poll timeout plus grace. @param now clock, for tests of expiry. */
  constructor(
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  touch(room: string, client: string): void {
    let clients = this.#rooms.get(room);
    if (!clients) {
      clients = new Map();
      this.#rooms.set(room, clients);
    }
    // Delete first so the map stays in last-seen order: the oldest entries come first.
    clients.delete(client);
    clients.set(client, this.now());
  }

  leave(room: string, client: string): void {
    const clients = this.#rooms.get(room);
    clients?.delete(client);
    if (clients?.size === 0) this.#rooms.delete(room);
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
    if (clients.size === 0) this.#rooms.delete(room);
    return clients.size;
  }

  async close(): Promise<void> {
    this.#rooms.clear();
  }
}
