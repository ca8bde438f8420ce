/**
 * Who is typing: the line "Ann is typing…" from the `typing` entries of the
 * `/recv` answers, and the page's own `POST /typing` while its person types.
 * No DOM here: the view renders the line's text (`render`).
 *
 * - Typing is never stored and never moves the cursor (protocol.ts,
 *   `RecvAnswer.typing`, `typingOnly`). A typist shows from the answer that
 *   names them until `limits.typingTtlMs` after the last answer that did, or
 *   until an answer woken for typing alone (`typingOnly`, which carries
 *   every typist of the room) leaves them out, or until a message of theirs
 *   arrives: they have stopped typing it.
 * - This browser's own typing is never shown: the server leaves it out of
 *   the answers to its polls (entries carry an opaque tag, not client ids).
 *   A server from before that sent client ids: the own one is left out here.
 * - The page tells the server at most every `limits.typingIntervalMs`, and
 *   only once the server has shown it knows of typing or people: a server
 *   without `POST /typing` is never asked (its 404 would be noise in the
 *   browser's console). A refusal (404, 429) or a network error is ignored:
 *   typing is a hint, never worth a retry.
 */
import { limits, type RecvAnswer } from '../protocol/protocol.ts';

/**
 * "Ann is typing…", "Ann and Bob are typing…", "Ann, Bob and 3 others are
 * typing…", or ''. `more`: typists the answer counted without naming them.
 */
export function typingText(nicknames: readonly string[], more = 0): string {
  const [first, second] = nicknames;
  const others = nicknames.length - 2 + more;
  if (first === undefined) {
    return more > 0 ? `${more} ${more === 1 ? 'person is' : 'people are'} typing…` : '';
  }
  if (second === undefined) {
    if (more === 0) return `${first} is typing…`;
    return `${first} and ${more} ${more === 1 ? 'other' : 'others'} are typing…`;
  }
  if (others === 0) return `${first} and ${second} are typing…`;
  return `${first}, ${second} and ${others} ${others === 1 ? 'other' : 'others'} are typing…`;
}

export interface TypingIndicatorOptions {
  /** This browser's `client` id: its own entries are left out. */
  ownClient(): string;
  /** Shows the line ('' when nobody types). Called only when the text changes. */
  render(text: string): void;
  /** @default limits.typingTtlMs */
  ttlMs?: number;
}

/** The typists of the room as the answers tell them, each expiring by itself. */
export class TypingIndicator {
  /** By client id, in the order they started typing: the first named stays first. */
  readonly #typists = new Map<string, { nickname: string; seenAt: number }>();
  /** Typists the last answer counted without naming them, and when. */
  #more = { count: 0, seenAt: 0 };
  #shown = '';
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #options: TypingIndicatorOptions;

  constructor(options: TypingIndicatorOptions) {
    this.#options = options;
  }

  /** Every `/recv` answer, whatever else it carries. */
  take(answer: Pick<RecvAnswer, 'typing' | 'typingMore' | 'typingOnly'>): void {
    const now = Date.now();
    const typing = answer.typing ?? [];
    if (answer.typing || answer.typingOnly)
      this.#more = { count: answer.typingMore ?? 0, seenAt: now };
    if (answer.typingOnly) {
      const named = new Set(typing.map((typist) => typist.client));
      for (const client of this.#typists.keys())
        if (!named.has(client)) this.#typists.delete(client);
    }
    const own = this.#options.ownClient();
    for (const { client, nickname } of typing) {
      if (client === own) continue;
      this.#typists.set(client, { nickname, seenAt: now });
    }
    this.#update();
  }

  /** A message arrived from this nickname: whoever typed it under that name has stopped. */
  messageFrom(nickname: string): void {
    for (const [client, typist] of this.#typists) {
      if (typist.nickname === nickname) this.#typists.delete(client);
    }
    this.#update();
  }

  /** Everyone goes: the page lost the server, and with it any news of who types. */
  clear(): void {
    this.#typists.clear();
    this.#more = { count: 0, seenAt: 0 };
    this.#update();
  }

  /** Drops the expired, renders if the line changed, and wakes at the next expiry. */
  #update(): void {
    const ttl = this.#options.ttlMs ?? limits.typingTtlMs;
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [client, { seenAt }] of this.#typists) {
      if (now - seenAt >= ttl) this.#typists.delete(client);
      else next = Math.min(next, seenAt + ttl);
    }
    if (this.#more.count > 0) {
      if (now - this.#more.seenAt >= ttl) this.#more = { count: 0, seenAt: 0 };
      else next = Math.min(next, this.#more.seenAt + ttl);
    }
    const text = typingText(
      [...this.#typists.values()].map((typist) => typist.nickname),
      this.#more.count,
    );
    if (text !== this.#shown) {
      this.#shown = text;
      this.#options.render(text);
    }
    clearTimeout(this.#timer);
    this.#timer = Number.isFinite(next) ? setTimeout(() => this.#update(), next - now) : undefined;
  }
}

export interface TypingNotifierOptions {
  /**
   * Tells the server (`api.ts`, `typing()`), `stopped` when the draft was
   * emptied; its failures are the caller's to ignore. Resolves when the
   * server has answered (or the request failed).
   */
  send(stopped: boolean): Promise<unknown>;
  /** @default limits.typingIntervalMs */
  intervalMs?: number;
}

/** The page's own typing, told to the server at most once per interval. */
export class TypingNotifier {
  #enabled = false;
  /** The server answered 404: it has no `POST /typing`, for as long as this page lives. */
  #unknown = false;
  #lastSent = Number.NEGATIVE_INFINITY;
  /** The server was told this draft is being typed, and not since that it stopped. */
  #told = false;
  /** The notice on its way, if any. */
  #inFlight: Promise<unknown> = Promise.resolve();
  readonly #options: TypingNotifierOptions;

  constructor(options: TypingNotifierOptions) {
    this.#options = options;
  }

  /** The server has shown it knows of typing (an answer carried `people` or `typing`). */
  enable(): void {
    this.#enabled = !this.#unknown;
  }

  /** The server has no `POST /typing` after all (it answered 404): stop asking, for good. */
  disable(): void {
    this.#unknown = true;
    this.#enabled = false;
  }

  /**
   * The person typed in the message field. A draft emptied by hand after
   * the server heard of it is told as stopped, at once: nobody types nothing.
   */
  typed(draft: string): void {
    if (!this.#enabled) return;
    if (draft.trim() === '') {
      if (!this.#told) return;
      this.#told = false;
      this.#lastSent = Number.NEGATIVE_INFINITY;
      this.#inFlight = this.#options.send(true);
      return;
    }
    const now = Date.now();
    if (now - this.#lastSent < (this.#options.intervalMs ?? limits.typingIntervalMs)) return;
    this.#lastSent = now;
    this.#told = true;
    this.#inFlight = this.#options.send(false);
  }

  /**
   * The message is being sent: the next keystroke starts a new draft, told at
   * once. The message itself ends the typing on the server, so no notice.
   */
  sent(): void {
    this.#lastSent = Number.NEGATIVE_INFINITY;
    this.#told = false;
  }

  /**
   * Settles once the notice on its way (if any) has been answered. A send
   * waits for it, so a notice for the draft never reaches the server after
   * the message that ends it (it would show the author typing again).
   */
  settled(): Promise<void> {
    return this.#inFlight.then(
      () => undefined,
      () => undefined,
    );
  }
}
