/**
 * The long-poll loop: no DOM here, only the protocol.
 *
 * - The cursor is the id of the last message the page has. Every poll sends
 *   it, so after any break (a network blip, a server restart, a poll that
 *   lands on another worker) the server answers with exactly what was missed.
 * - After an answer, poll again at once: that is what keeps the page live.
 * - After an error, wait with backoff and jitter (`backoff.ts`), believing
 *   `Retry-After`, then first make a quick request (`GET /time`) so the page
 *   shows "connected" as soon as the server is back, not one whole poll
 *   timeout later when the next long poll answers.
 * - Messages with an id at or below the cursor are dropped: none shows twice.
 * - An error that a retry cannot fix (a 4xx such as an invalid room) stops
 *   the loop and is reported, rather than hammering the server.
 * - An answer with `reset: true` says the cursor is ahead of every message
 *   of the room: the room was reset (a new database, messages deleted by an
 *   operator), and ids start again. What the page shows is void: it reloads
 *   the room (`onReset`) and the loop polls on from what that shows, or from
 *   the room's head that the answer carries (docs/design.md, "Cursors and
 *   dense ids").
 */
import { ApiError, type Message, ping, type RecvAnswer, recv } from './api.ts';
import { type BackoffOptions, backoffDelay, sleep } from './backoff.ts';

export type ConnectionStatus = 'connecting' | 'connected' | 'reconnecting' | 'stopped';

export interface PollerOptions {
  room: string;
  /** This tab's random id: the server counts it in the room's `online`. */
  client: string;
  /** Id of the last message the page already has (0 for none). */
  cursor: number;
  onMessages(messages: Message[]): void;
  onOnline(count: number): void;
  onStatus(status: ConnectionStatus, error?: ApiError): void;
  /**
   * The room was reset; `head` is the id of its newest message now (0 when
   * it is empty). The page clears what it shows and reloads the room, then
   * resolves with the id of the newest message it shows, the loop's new
   * cursor (undefined: poll on from `head`). Without it the loop just moves
   * its cursor to `head`.
   */
  onReset?(head: number): Promise<number | undefined>;
  /** Added to each poll's query, read just before it leaves (e.g. `people`, `nickname`). */
  query?(): Record<string, string>;
  /** Every answer, whole (people, typing, typingOnly), after its messages were handed on. */
  onAnswer?(answer: RecvAnswer): void;
  /** The transport; tests may pass their own. */
  recv?: typeof recv;
  ping?: typeof ping;
  backoff?: BackoffOptions;
}

export class Poller {
  #cursor: number;
  #status: ConnectionStatus = 'connecting';
  #stopped = false;
  readonly #abort = new AbortController();
  #wake: () => void = () => {};
  readonly #options: PollerOptions;

  constructor(options: PollerOptions) {
    this.#options = options;
    this.#cursor = options.cursor;
  }

  get cursor(): number {
    return this.#cursor;
  }

  get status(): ConnectionStatus {
    return this.#status;
  }

  start(): void {
    void this.#loop();
  }

  /** Ends the loop and aborts the waiting poll (the server frees its waiter at once). */
  stop(): void {
    this.#stopped = true;
    this.#abort.abort();
    this.#wake();
  }

  /** Cuts a backoff wait short, e.g. when the browser reports it is back online. */
  wake(): void {
    this.#wake();
  }

  async #loop(): Promise<void> {
    const { room, client } = this.#options;
    const recvFrom = this.#options.recv ?? recv;
    const pingServer = this.#options.ping ?? ping;
    let failures = 0;
    while (!this.#stopped) {
      try {
        if (failures > 0) {
          await pingServer();
          this.#setStatus('connected');
        }
        const extra = this.#options.query?.() ?? {};
        const answer = await recvFrom(room, this.#cursor, client, this.#abort.signal, extra);
        if (this.#stopped) return;
        failures = 0;
        this.#setStatus('connected');
        if (answer.reset) await this.#reset(answer);
        else this.#take(answer);
        if (!this.#stopped) this.#options.onAnswer?.(answer);
      } catch (thrown) {
        if (this.#stopped) return;
        const error = asApiError(thrown);
        if (!error.retryable) {
          this.#setStatus('stopped', error);
          return;
        }
        this.#setStatus('reconnecting', error);
        const pause = sleep(backoffDelay(failures, error.retryAfterMs, this.#options.backoff));
        failures += 1;
        this.#wake = pause.wake;
        await pause.done;
      }
    }
  }

  #take(answer: RecvAnswer): void {
    const fresh = answer.messages.filter((message) => message.id > this.#cursor);
    if (fresh.length > 0) {
      this.#cursor = Math.max(...fresh.map((message) => message.id));
      this.#options.onMessages(fresh);
    }
    this.#options.onOnline(answer.online);
  }

  /** The cursor is void: start again from what the page reloads, or from the room's head. */
  async #reset(answer: RecvAnswer): Promise<void> {
    this.#cursor = answer.cursor;
    const shown = await this.#options.onReset?.(answer.cursor);
    if (this.#stopped) return;
    if (shown !== undefined) this.#cursor = shown;
    this.#options.onOnline(answer.online);
  }

  #setStatus(status: ConnectionStatus, error?: ApiError): void {
    if (status === this.#status && status === 'connected') return;
    this.#status = status;
    this.#options.onStatus(status, error);
  }
}

/** A malformed answer (a proxy's HTML page with status 200) is treated like a network error. */
function asApiError(thrown: unknown): ApiError {
  if (thrown instanceof ApiError) return thrown;
  return new ApiError('The server gave an answer the page cannot read.', 0, 'bad_answer');
}
