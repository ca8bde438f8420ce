/**
 * Which messages this browser sent, remembered across reloads so that they
 * keep their "mine" style.
 *
 * A wire `Message` names no author, only a nickname anyone may type, so the
 * browser keeps what it knows for certain: each message the server
 * acknowledged to it, by id and server time, per room, in `localStorage`
 * (guarded: with storage blocked, the marks last until the page closes).
 * The time is part of the mark because ids start again at 1 after a
 * database reset, and a stranger's new message 3 must not look like our old
 * message 3. Only the newest marks are kept, so storage stays small.
 *
 * This is per browser, not per tab: every tab of the browser reads the same
 * marks when it opens, as it reads the browser's `client` id for the online
 * count (client-id.ts).
 */
import type { Message } from '../protocol/protocol.ts';
import { loadItem, saveItem } from './storage.ts';

/** Marks kept per room: far more than a page of history shows. */
export const KEEP = 500;

export interface MarkStorage {
  load(key: string): string | undefined;
  save(key: string, value: string): boolean;
}

const browserStorage: MarkStorage = { load: loadItem, save: saveItem };

const mark = (message: Pick<Message, 'id' | 'time'>) => `${message.id}@${message.time}`;

export class OwnMessages {
  readonly #key: string;
  readonly #storage: MarkStorage;
  /** Oldest first; a Set keeps insertion order, so the oldest are dropped first. */
  readonly #marks: Set<string>;

  constructor(room: string, storage: MarkStorage = browserStorage) {
    this.#key = `chat.mine.${room}`;
    this.#storage = storage;
    this.#marks = new Set(parse(storage.load(this.#key)));
  }

  has(message: Pick<Message, 'id' | 'time'>): boolean {
    return this.#marks.has(mark(message));
  }

  /** A message the server acknowledged to this page. */
  add(message: Pick<Message, 'id' | 'time'>): void {
    this.#marks.add(mark(message));
    for (const old of this.#marks) {
      if (this.#marks.size <= KEEP) break;
      this.#marks.delete(old);
    }
    this.#storage.save(this.#key, JSON.stringify([...this.#marks]));
  }
}

/** Stored marks, or none when the value is missing or not ours (edited by hand, an old format). */
function parse(stored: string | undefined): string[] {
  if (stored === undefined) return [];
  try {
    const value: unknown = JSON.parse(stored);
    return Array.isArray(value) ? value.filter((item) => typeof item === 'string') : [];
  } catch {
    return [];
  }
}
