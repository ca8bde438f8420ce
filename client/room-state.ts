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
 * - An answer another tab handed on (`apply(answer, true)`) may leave a gap
 *   after the cursor: this tab missed a note (it was paused, or a handover
 *   was lost), or the note was forged. Its messages are then read from the
 *   server instead (`catchUp`, `/history`): what the tab shows is what the
 *   server has, with nothing missed. Ids are dense, so a gap is a first new
 *   id above the cursor plus one; a permanent gap (a failed write) costs one
 *   `/history` read per answer across it.
 */
import { limits, type Message, type RecvAnswer } from '../protocol/protocol.ts';

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
  /**
   * The room's messages before the id `before`, the latest `limits.pageSize`
   * of them, oldest first (`/history`): how a gap is filled.
   */
  catchUp?(before: number): Promise<Message[]>;
}

/** Pages of `/history` one gap may read; past them the tab goes on from what it has. */
const CATCH_UP_PAGES = 10;

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
  apply(answer: RecvAnswer, handedOn = false): Promise<void> {
    const next = this.#applied.then(() => this.#take(answer, handedOn));
    // One answer's failure (a callback's bug) must not stop the ones after it.
    this.#applied = next.catch(() => undefined);
    return next;
  }

  async #take(answer: RecvAnswer, handedOn: boolean): Promise<void> {
    const { onMessages, onOnline, onReset, onAnswer } = this.#options;
    if (answer.reset) {
      this.#cursor = answer.cursor;
      const shown = await onReset?.(answer.cursor);
      if (shown !== undefined) this.#cursor = shown;
      onOnline(answer.online);
      onAnswer?.(answer);
      return;
    }
    let fresh = answer.messages.filter((message) => message.id > this.#cursor);
    const first = Math.min(...fresh.map((message) => message.id));
    if (handedOn && fresh.length > 0 && first > this.#cursor + 1) {
      const caught = await this.#catchUp(Math.max(...fresh.map((message) => message.id)));
      if (caught) fresh = caught;
    }
    if (fresh.length > 0) {
      this.#cursor = Math.max(...fresh.map((message) => message.id));
      onMessages(fresh);
    }
    onOnline(answer.online);
    onAnswer?.({ ...answer, messages: fresh });
  }

  /** The server's messages after the cursor up to `last`, or undefined when it cannot say. */
  async #catchUp(last: number): Promise<Message[] | undefined> {
    const { catchUp } = this.#options;
    if (!catchUp) return undefined;
    const pages: Message[][] = [];
    let before = last + 1;
    try {
      for (let i = 0; i < CATCH_UP_PAGES; i += 1) {
        const read = await catchUp(before);
        const page = read.filter((message) => message.id > this.#cursor);
        pages.unshift(page);
        const oldest = page[0]?.id;
        // A short page holds all there is before `before`.
        if (oldest === undefined || oldest <= this.#cursor + 1 || read.length < limits.pageSize)
          break;
        before = oldest;
      }
    } catch {
      return undefined; // The server is out of reach: show what was handed on, as before.
    }
    return pages.flat();
  }
}
