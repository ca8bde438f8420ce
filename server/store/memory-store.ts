/**
 * The in-memory store: for tests and for trying the chat with nothing
 * installed (`DATABASE_URL=memory:`). Everything is lost on restart.
 */
import type { AppendResult, Message, MessageStore, NewMessage } from './store.ts';

interface Room {
  messages: Message[];
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
      id: room.messages.length + 1,
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
    // Ids are 1..n with no gaps, so message `id` sits at index `id - 1`.
    const messages = this.#rooms.get(room)?.messages ?? [];
    return messages.slice(since, since + limit);
  }

  async before(room: string, before: number | undefined, limit: number): Promise<Message[]> {
    const messages = this.#rooms.get(room)?.messages ?? [];
    const end = before === undefined ? messages.length : Math.min(before - 1, messages.length);
    return messages.slice(Math.max(0, end - limit), Math.max(0, end));
  }

  async heads(rooms: readonly string[]): Promise<Map<string, number>> {
    const heads = new Map<string, number>();
    for (const name of rooms) {
      const count = this.#rooms.get(name)?.messages.length ?? 0;
      if (count > 0) heads.set(name, count);
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
      room = { messages: [], keys: new Map() };
      this.#rooms.set(name, room);
    }
    return room;
  }
}
