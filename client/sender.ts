/**
 * Sending messages, reliably and in order.
 *
 * Each message gets a random idempotency `key` when the user sends it. A
 * send that fails on the network, or gets 429/503, is retried with the same
 * key after a backoff, so the server stores it once even when an earlier
 * attempt did reach it and only the answer was lost. Sends leave one at a
 * time, in the order typed, so a retry never lets a later line overtake an
 * earlier one. An error a retry cannot fix (other 4xx) is reported and the
 * queue moves on.
 *
 * A send that gets no answer within `timeoutMs` is given up and retried the
 * same way: its connection may be one nobody will ever answer (a server
 * worker that died holding it, a NAT entry dropped), and without a timeout
 * the message would stay "sending…" for good.
 */
import { ApiError, type Message, send } from './api.ts';
import { type BackoffOptions, backoffDelay, sleep } from './backoff.ts';
import { randomId } from './ids.ts';

/**
 * How long a send may wait for its answer before it is retried. The server
 * answers a send within its store deadline (`STORE_TIMEOUT_MS`, 2 s by
 * default: stored, or 503); this leaves room for a slow network on top.
 */
export const SEND_TIMEOUT_MS = 10_000;

export interface PendingSend {
  key: string;
  text: string;
  nickname: string;
}

export interface SenderOptions {
  room: string;
  /** The browser's client id, sent with each message: its share of the send limit (a NAT's people are counted apart). */
  client?: () => string;
  /** The server stored it. */
  onSent(pending: PendingSend, message: Message): void;
  /** A retry failed and another will follow. */
  onRetrying(pending: PendingSend, error: ApiError): void;
  /** The server refused it for good (4xx): the text is handed back. */
  onRefused(pending: PendingSend, error: ApiError): void;
  send?: typeof send;
  backoff?: BackoffOptions;
  /** @default SEND_TIMEOUT_MS */
  timeoutMs?: number;
  /**
   * Awaited before a message's first attempt (bounded by `beforeMs`): the
   * typing notice for its draft, which must reach the server first.
   */
  before?: () => Promise<void>;
  /** @default BEFORE_MS */
  beforeMs?: number;
}

/** The longest a send waits for `before`: a hint is never worth holding a message up. */
export const BEFORE_MS = 1_000;

export class Sender {
  readonly #queue: PendingSend[] = [];
  #running = false;
  #wake: () => void = () => {};
  readonly #options: SenderOptions;

  constructor(options: SenderOptions) {
    this.#options = options;
  }

  /** Queues a message and returns it with its key, so the page can show it as pending. */
  enqueue(text: string, nickname: string): PendingSend {
    const pending = { key: randomId(), text, nickname };
    this.#queue.push(pending);
    if (!this.#running) void this.#run();
    return pending;
  }

  /** Cuts a backoff wait short, e.g. when the browser reports it is back online. */
  wake(): void {
    this.#wake();
  }

  async #run(): Promise<void> {
    this.#running = true;
    for (let pending = this.#queue[0]; pending; pending = this.#queue[0]) {
      await this.#deliver(pending);
      this.#queue.shift();
    }
    this.#running = false;
  }

  async #deliver(pending: PendingSend): Promise<void> {
    const { room, client, onSent, onRetrying, onRefused } = this.#options;
    const post = this.#options.send ?? send;
    const before = this.#options.before;
    if (before) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.#options.beforeMs ?? BEFORE_MS);
      });
      await Promise.race([before(), bound]);
      clearTimeout(timer);
    }
    for (let attempt = 0; ; attempt += 1) {
      try {
        const timeout = AbortSignal.timeout(this.#options.timeoutMs ?? SEND_TIMEOUT_MS);
        const message = await post(
          { ...pending, room, ...(client && { client: client() }) },
          timeout,
        );
        onSent(pending, message);
        return;
      } catch (thrown) {
        const error =
          thrown instanceof ApiError ? thrown : new ApiError(String(thrown), 0, 'bad_answer');
        if (!error.retryable) {
          onRefused(pending, error);
          return;
        }
        onRetrying(pending, error);
        const pause = sleep(backoffDelay(attempt, error.retryAfterMs, this.#options.backoff));
        this.#wake = pause.wake;
        await pause.done;
      }
    }
  }
}
