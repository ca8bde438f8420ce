/**
 * The in-memory store: for tests and for trying the chat with nothing
 * installed (`DATABASE_URL=memory:`). Everything is lost on restart.
 */
import type { AppendResult, Message, MessageStore, NewMessage, PrunePolicy } from './store.ts';

interface Room {
  /** Ids `pruned + 1` on, with no gaps. */
  messages: Message[];
  /** The largest id `prune` deleted (0: none). */
  pruned: number;
  keys: Map<string, Message>;
}

export class MemoryStore implements MessageStore {
  readonly kind = 'memory';
  readonly #rooms = new Map<string, Room>();

  async init(): Promise<void> {}

  async append(input: NewMessage): Promise<AppendResult> {
    const room = this.#room(input.room);
    const seen = input.key === undefined ? undefined : room.keys.get(input.key);
    if (seen) return { message: seen, created: false };
    const message: Message = {
      id: room.pruned + room.messages.length + 1,
      room: input.room,
      nickname: input.nickname,
      text: input.text,
      time: new Date().toISOString(),
    };
    room.messages.push(message);
    if (input.key !== undefined) room.keys.set(input.key, message);
    return { message, created: true };
  }

  async after(room: string, since: number, limit: number): Promise<Message[]> {
    // Ids have no gaps, so message `id` sits at index `id - pruned - 1`.
    const { messages = [], pruned = 0 } = this.#rooms.get(room) ?? {};
    const start = Math.max(0, since - pruned);
    return messages.slice(start, start + limit);
  }

  async before(room: string, before: number | undefined, limit: number): Promise<Message[]> {
    const { messages = [], pruned = 0 } = this.#rooms.get(room) ?? {};
    const end =
      before === undefined ? messages.length : Math.min(before - 1 - pruned, messages.length);
    return messages.slice(Math.max(0, end - limit), Math.max(0, end));
  }

  async prune(policy: PrunePolicy): Promise<number> {
    const cutoff = policy.olderThan.toISOString();
    const counted = new Set(policy.rooms);
    let deleted = 0;
    for (const [name, room] of this.#rooms) {
      const { messages } = room;
      let drop = counted.has(name) ? Math.max(0, messages.length - policy.keepPerRoom) : 0;
      while (drop < messages.length - 1 && messages[drop]!.time < cutoff) drop += 1;
      drop = Math.min(drop, messages.length - 1, policy.maxRows - deleted);
      if (drop <= 0) continue;
      messages.splice(0, drop);
      room.pruned += drop;
      for (const [key, kept] of room.keys) if (kept.id <= room.pruned) room.keys.delete(key);
      deleted += drop;
      if (deleted >= policy.maxRows) break;
    }
    return deleted;
  }

  async pruned(room: string): Promise<number> {
    return this.#rooms.get(room)?.pruned ?? 0;
  }

  async heads(rooms: readonly string[]): Promise<Map<string, number>> {
    const heads = new Map<string, number>();
    for (const name of rooms) {
      const room = this.#rooms.get(name);
      if (room && room.messages.length > 0) heads.set(name, room.pruned + room.messages.length);
    }
    return heads;
  }

  /** Drops a room's messages, as an operator might: for the reset tests. */
  clear(room: string): void {
    this.#rooms.delete(room);
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}

  #room(name: string): Room {
    let room = this.#rooms.get(name);
    if (!room) {
      room = { messages: [], pruned: 0, keys: new Map() };
      this.#rooms.set(name, room);
    }
    return room;
  }
}
