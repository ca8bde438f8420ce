/**
 * The long-poll loop: no DOM here, only the protocol.
 *
 * - The cursor is the id of the last message the page has. Every poll sends
 *   it, so after any break (a network blip, a server restart, a poll that
 *   lands on another worker) the server answers with exactly what was missed.
 *   The loop reads it before each poll (`cursor()`): the tab's room state
 *   (`room-state.ts`) owns it, so a tab that takes over the poll from another
 *   tab polls from what it shows (`tabs/`).
 * - After an answer, poll again at once: that is what keeps the page live.
 *   An answer woken only for typing (`typingOnly`) carries the same cursor,
 *   and the loop polls again at once with it, like any other answer.
 * - After an error, wait with backoff and jitter (`backoff.ts`), believing
 *   `Retry-After`, then first make a quick request (`GET /time`) so the page
 *   shows "connected" as soon as the server is back, not one whole poll
 *   timeout later when the next long poll answers.
 * - A server the page cannot reach at all (no answer: it is down or
 *   restarting) is probed with that quick request at a jittered interval
 *   under a second (`probeDelay`) instead, and polled again at once when a
 *   probe is answered: the page notices the server's return within a second,
 *   and a down server gets one tiny request a second from each browser, never
 *   a long poll; so is one a proxy says is down (502, 504, a 503 without
 *   `Retry-After`). The chat's own refusals (429, 503 with `Retry-After`)
 *   get the backoff, as they ask.
 * - An error that a retry cannot fix (a 4xx such as an invalid room) stops
 *   the loop and is reported, rather than hammering the server.
 * - Every answer goes to `onAnswer`, and the next poll leaves once it has
 *   settled: a `reset` answer reloads the room first, and the loop polls on
 *   from what that shows (docs/design.md, "Cursors and dense ids").
 */
import { ApiError, ping, type RecvAnswer, recv } from './api.ts';
import { type BackoffOptions, backoffDelay, probeDelay, sleep } from './backoff.ts';

export type ConnectionStatus = 'connecting' | 'connected' | 'reconnecting' | 'stopped';

export interface PollerOptions {
  room: string;
  /** This browser's id: the server counts it once in the room's `online`, whichever tab polls. */
  client: string;
  /** The id of the last message the page has (0 for none), read before each poll. */
  cursor(): number;
  /** Extra query parameters, read before each poll (`room`, `since` and `client` win). */
  query?: () => Record<string, string>;
  /** Every answer, as the server sent it. The next poll waits until it settles. */
  onAnswer(answer: RecvAnswer): void | Promise<void>;
  onStatus(status: ConnectionStatus, error?: ApiError): void;
  /** The transport; tests may pass their own. */
  recv?: typeof recv;
  ping?: typeof ping;
  backoff?: BackoffOptions;
}

export class Poller {
  #status: ConnectionStatus = 'connecting';
  #stopped = false;
  readonly #abort = new AbortController();
  /** The poll on its way, which `repoll` may cut short. */
  #poll: AbortController | undefined;
  #repolling = false;
  #wake: () => void = () => {};
  readonly #options: PollerOptions;

  constructor(options: PollerOptions) {
    this.#options = options;
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

  /**
   * Ends the waiting poll and sends the next at once, with what `query`
   * says now (a new nickname). Not an error: the status stays as it is.
   * Outside a waiting poll it does nothing: the next poll reads `query` anyway.
   */
  repoll(): void {
    if (this.#poll === undefined) return;
    this.#repolling = true;
    this.#poll.abort();
  }

  async #loop(): Promise<void> {
    const { room, client, cursor, query } = this.#options;
    const recvFrom = this.#options.recv ?? recv;
    const pingServer = this.#options.ping ?? ping;
    let failures = 0;
    while (!this.#stopped) {
      try {
        if (failures > 0) {
          await pingServer();
          this.#setStatus('connected');
        }
        const poll = new AbortController();
        this.#poll = poll;
        this.#repolling = false;
        const signal = AbortSignal.any([this.#abort.signal, poll.signal]);
        let answer: RecvAnswer;
        try {
          answer = await recvFrom(room, cursor(), client, signal, query?.());
        } finally {
          this.#poll = undefined;
        }
        if (this.#stopped) return;
        failures = 0;
        this.#setStatus('connected');
        await this.#options.onAnswer(answer);
      } catch (thrown) {
        if (this.#stopped) return;
        if (this.#repolling) {
          this.#repolling = false;
          continue;
        }
        const error = asApiError(thrown);
        if (!error.retryable) {
          this.#setStatus('stopped', error);
          return;
        }
        this.#setStatus('reconnecting', error);
        if (unreachable(error)) {
          if (await this.#probeUntilBack(pingServer)) {
            failures = 0;
            this.#setStatus('connected');
          }
          continue;
        }
        const pause = sleep(backoffDelay(failures, error.retryAfterMs, this.#options.backoff));
        failures += 1;
        this.#wake = pause.wake;
        await pause.done;
      }
    }
  }

  /**
   * Probes until the server answers (true), or the loop stops (false). A
   * probe that gets an error answer (the server is up but refusing) also
   * ends it: the loop's own backoff then takes over.
   */
  async #probeUntilBack(pingServer: typeof ping): Promise<boolean> {
    for (let probe = 0; !this.#stopped; probe += 1) {
      const pause = sleep(probeDelay(probe, this.#options.backoff));
      this.#wake = pause.wake;
      await pause.done;
      if (this.#stopped) return false;
      try {
        await pingServer();
        return true;
      } catch (thrown) {
        if (!unreachable(asApiError(thrown))) return false;
      }
    }
    return false;
  }

  #setStatus(status: ConnectionStatus, error?: ApiError): void {
    if (status === this.#status && status === 'connected') return;
    this.#status = status;
    this.#options.onStatus(status, error);
  }
}

/**
 * The server is not there to ask: no answer at all, or a proxy in front of
 * it saying so (502, 504, or a 503 without the `Retry-After` the chat's own
 * 503 always carries). Probed, not backed off: it is not the chat asking
 * for patience.
 */
function unreachable(error: ApiError): boolean {
  if (error.code === 'network_error') return true;
  if (error.retryAfterMs !== undefined) return false;
  return error.status === 502 || error.status === 503 || error.status === 504;
}

/** A malformed answer (a proxy's HTML page with status 200) is treated like a network error. */
function asApiError(thrown: unknown): ApiError {
  if (thrown instanceof ApiError) return thrown;
  return new ApiError('The server gave an answer the page cannot read.', 0, 'bad_answer');
}
