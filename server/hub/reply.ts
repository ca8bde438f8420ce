/**
 * What the hub answers a poll through, so the hub speaks no HTTP
 * (docs/design.md, "The hub"): a poll is a `Reply` the hub can watch (its
 * client may go away), and `Replies` writes a body to it. Status, headers
 * and the connection are the transport's (server/http/poll-reply.ts): Node's
 * `ServerResponse` is passed as is, with no wrapper per poll.
 */
import type { Body } from './body.ts';

export interface Reply {
  /** Answered already. */
  readonly writableEnded: boolean;
  /** The client went away. */
  readonly destroyed: boolean;
  /** `close` before the answer: the client went away. */
  on(event: 'close', listener: () => void): unknown;
  removeListener(event: 'close', listener: () => void): unknown;
}

/** The transport's side of a poll: how it is answered and who asked. */
export interface Replies<R extends Reply> {
  /**
   * Answers `reply` with `body`; `last` when the server shuts down (the
   * connection goes with the answer, so the client reconnects elsewhere).
   * False when the client is gone or was answered already.
   */
  send(reply: R, body: Body, last: boolean): boolean;
  /** The poll's client address, read only near the per-address limit (`address-count.ts`). */
  addressOf(reply: R): string;
  /** The share of waiting polls of a poll served without its client id (`client-share.ts`). */
  shareOf?(reply: R): string | undefined;
  /**
   * The poll waits in a quiet room, so it is likely to wait long: the
   * transport may let go of what it holds per request meanwhile
   * (server/net/parking.ts). Its answer comes through `send` as any other.
   */
  park?(reply: R): void;
}
