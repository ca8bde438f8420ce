/**
 * What the hub tells of each poll it ends, and of each delivery, as typed
 * events (`Hub.onPollEnded`, `Hub.onDelivered`): the transport turns them
 * into the request log line, and the metrics into their counts
 * (server/metrics/telemetry.ts). The hub knows no status code: how a poll
 * ended is its outcome.
 */

/** How a `GET /recv` ended. */
export type PollOutcome =
  /** Answered with messages (at once, or while it waited). */
  | 'message'
  /** Held for the whole poll timeout, answered empty. */
  | 'timeout'
  /** The client went away before its answer. */
  | 'gone'
  /** Answered empty because the server is shutting down. */
  | 'shutdown'
  /** Answered empty because the room's online count or list changed. */
  | 'presence'
  /** Answered empty, with who types, by a typing wake (`typingOnly`). */
  | 'typing'
  /** Answered at once because the cursor is ahead of the room (`reset`). */
  | 'reset'
  /** Refused with an error answer (4xx/5xx): bad input, overloaded, a limit. */
  | 'error';

/** A poll the hub ended: answered (every outcome but `gone`), or left by its client (`gone`). */
export interface PollEnded<R> {
  reply: R;
  room: string;
  outcome: Exclude<PollOutcome, 'error'>;
  /** From the poll's arrival, or from when it began to wait. */
  ms: number;
}

/** The hub's poll events and their listeners (`Hub.onPollEnded`, `Hub.onDelivered`). */
export class PollEvents<R> {
  readonly #ended: Array<(ended: PollEnded<R>) => void> = [];
  readonly #delivered: Array<(count: number) => void> = [];

  onPollEnded(listener: (ended: PollEnded<R>) => void): void {
    this.#ended.push(listener);
  }

  onDelivered(listener: (count: number) => void): void {
    this.#delivered.push(listener);
  }

  ended(reply: R, room: string, outcome: PollEnded<R>['outcome'], ms: number): void {
    if (this.#ended.length === 0) return;
    const event: PollEnded<R> = { reply, room, outcome, ms };
    for (const listener of this.#ended) listener(event);
  }

  /** Messages written to polls: one message to one poll counts once. */
  delivered(count: number): void {
    for (const listener of this.#delivered) listener(count);
  }
}
