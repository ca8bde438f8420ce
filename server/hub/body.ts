/**
 * A poll's answer, serialised once and shared by every poll that gets the
 * same answer (docs/design.md, "Rules that make delivery correct", rule 5).
 * How it goes on the wire (status, headers) is the transport's
 * (server/http/poll-reply.ts), which shares its headers per body too.
 *
 * The one place where an answer's fields are put together (`recvBody`):
 * fields that ride on answers later (`people`, `typing`, protocol.ts) are
 * added here.
 */
import type { Message, People, RecvAnswer, Typist } from '../../protocol/protocol.ts';

/** Who types in a room: the first few named, and how many more. */
export interface TypingNow {
  typists: readonly Typist[];
  more: number;
}

/** A typing wake: who types, and who types as seen by a poll whose own browser is one of them. */
export interface TypingWake extends TypingNow {
  /** Whether `client` is one of the room's typists. */
  has(client: string): boolean;
  /** Who types but `client`. */
  without(client: string): TypingNow;
}

/** A serialised answer, built once per group of polls. */
export interface Body {
  readonly json: string;
  /** Messages in it: deliveries counted per poll answered. */
  readonly count: number;
  /**
   * The transport's own rendering of this body (server/http/poll-reply.ts:
   * its headers), made at its first answer and shared by the next ones. A
   * slot on the body, set on every body alike, rather than a side table:
   * a WeakMap entry per body cost sustained delivery measurably.
   */
  wire: unknown;
}

/**
 * The `/recv` answer's JSON, byte for byte `JSON.stringify(answer)`, built
 * from its parts so the messages are stringified as one array.
 */
export function recvJson(answer: RecvAnswer): string {
  const reset = answer.reset ? ',"reset":true' : '';
  const expired = answer.expired ? ',"expired":true' : '';
  const people = answer.people ? `,"people":${JSON.stringify(answer.people)}` : '';
  const typing = answer.typing ? `,"typing":${JSON.stringify(answer.typing)}` : '';
  const typingMore = answer.typingMore ? `,"typingMore":${answer.typingMore}` : '';
  const typingOnly = answer.typingOnly ? ',"typingOnly":true' : '';
  return `{"messages":${JSON.stringify(answer.messages)},"cursor":${answer.cursor},"online":${answer.online}${reset}${expired}${people}${typing}${typingMore}${typingOnly}}`;
}

/** What an answer may carry besides its messages (protocol.ts, `RecvAnswer`). */
export interface BodyExtras {
  reset?: boolean;
  /** Messages after the poll's cursor were deleted by retention before it read them. */
  expired?: boolean;
  /** The room's list, for a poll whose `people=` version is not its version. */
  people?: People | undefined;
  /** A typing wake: who types; the answer says it is only that (`typingOnly`). */
  typing?: TypingNow | undefined;
}

export function recvBody(
  messages: readonly Message[],
  cursor: number,
  online: number,
  extras: BodyExtras = {},
): Body {
  const answer: RecvAnswer = { messages: messages as Message[], cursor, online };
  if (extras.reset) answer.reset = true;
  if (extras.expired) answer.expired = true;
  if (extras.people) answer.people = extras.people;
  if (extras.typing) {
    answer.typing = extras.typing.typists as Typist[];
    if (extras.typing.more > 0) answer.typingMore = extras.typing.more;
    answer.typingOnly = true;
  }
  return { json: recvJson(answer), count: messages.length, wire: undefined };
}
