/**
 * What one tab has of its room, and how each `/recv` answer changes it: no
 * DOM, no network. The same answers reach every tab of a browser, whether
 * the tab polled them itself or another tab handed them on (`tabs/`), and
 * each tab applies them here against its own cursor.
 *
 * - The cursor is the id of the newest message the tab shows from the room
 *   (its first page of history, then every answer). Messages at or below it
 *   are dropped: none shows twice, however many tabs hand on the same answer.
 * - A `reset` answer voids the cursor: the page reloads the room (`onReset`)
 *   and the cursor becomes what that shows, or the room's head the answer
 *   carries (docs/design.md, "Cursors and dense ids").
 * - Answers are applied one at a time, in the order they came: one that
 *   comes during a reload waits for it, then is read against the new cursor.
 */
import type { Message, RecvAnswer } from '../protocol/protocol.ts';

export interface RoomStateOptions {
  /** Id of the newest message the page already shows (0 for none). */
  cursor: number;
  /** New messages, in id order, each once. */
  onMessages(messages: Message[]): void;
  onOnline(count: number): void;
  /**
   * The room was reset; `head` is the id of its newest message now (0 when
   * it is empty). The page clears what it shows and reloads the room, then
   * resolves with the id of the newest message it shows (undefined: `head`).
   */
  onReset?(head: number): Promise<number | undefined>;
  /**
   * Every answer, after the above, with `messages` cut to the new ones: the
   * other fields (`people`, `typing`, `typingOnly`, …) as the server sent them.
   */
  onAnswer?(answer: RecvAnswer): void;
}

export class RoomState {
  #cursor: number;
  #applied: Promise<void> = Promise.resolve();
  readonly #options: RoomStateOptions;

  constructor(options: RoomStateOptions) {
    this.#options = options;
    this.#cursor = options.cursor;
  }

  get cursor(): number {
    return this.#cursor;
  }

  /** Applies `answer` after every answer before it; resolves once it is applied. */
  apply(answer: RecvAnswer): Promise<void> {
    const next = this.#applied.then(() => this.#take(answer));
    // One answer's failure (a callback's bug) must not stop the ones after it.
    this.#applied = next.catch(() => undefined);
    return next;
  }

  async #take(answer: RecvAnswer): Promise<void> {
    const { onMessages, onOnline, onReset, onAnswer } = this.#options;
    if (answer.reset) {
      this.#cursor = answer.cursor;
      const shown = await onReset?.(answer.cursor);
      if (shown !== undefined) this.#cursor = shown;
      onOnline(answer.online);
      onAnswer?.(answer);
      return;
    }
    const fresh = answer.messages.filter((message) => message.id > this.#cursor);
    if (fresh.length > 0) {
      this.#cursor = Math.max(...fresh.map((message) => message.id));
      onMessages(fresh);
    }
    onOnline(answer.online);
    onAnswer?.({ ...answer, messages: fresh });
  }
}
