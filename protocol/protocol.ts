/**
 * The chat's wire protocol: the shapes the HTTP API sends and the limits it
 * enforces, declared once (docs/design.md, "The HTTP contract").
 *
 * The server, the browser client, the tests and the benchmarks import this
 * module, so a field or a limit changes in one place. It has no imports and
 * no runtime dependencies: it compiles for Node and for the browser alike.
 */

/** A stored chat message, exactly as every route returns it. */
export interface Message {
  /** Positive, dense per room: 1, 2, 3, … (docs/design.md, "Cursors and dense ids"). */
  id: number;
  room: string;
  nickname: string;
  text: string;
  /** ISO 8601, assigned by the store when it kept the message. */
  time: string;
}

/** `GET /recv`: the long-poll's answer. */
export interface RecvAnswer {
  messages: Message[];
  /** The id of the last message the client now has: its next `since`. */
  cursor: number;
  /** Clients of the room seen polling within the poll timeout plus grace. */
  online: number;
  /**
   * Present (true) when the client's cursor is ahead of every message of the
   * room: the room was reset (a new database, messages deleted). The cursor
   * it carries is the room's head; the client reloads the room's history and
   * polls on from there.
   */
  reset?: true;
  /**
   * Present (true) when messages after the client's cursor have expired:
   * retention deleted them (`RETENTION_DAYS`, `RETENTION_PER_ROOM`) before
   * the client read them. The answer carries the oldest kept ones, as any
   * catch-up; the page may show that older messages have expired.
   */
  expired?: true;
  /**
   * Who is here: present only when the room's list changed since the version
   * the client sent (`/recv?people=<version>`), so a quiet room's answers
   * stay small. Absent: the client's list is still right.
   */
  people?: People;
  /**
   * Who is typing in the room now (never stored; expires by itself
   * `limits.typingTtlMs` after the typist's last `POST /typing`). Present
   * when anyone is typing but the poll's own browser (left out by the
   * server: the page has nothing to hide). At most
   * `limits.maxTypistsNamed`, the first to start first; the rest are
   * counted in `typingMore`.
   */
  typing?: Typist[];
  /** Present (above 0) when more type than `typing` names: how many more. */
  typingMore?: number;
  /**
   * Present (true) when the answer was woken only for typing: no messages,
   * the cursor unchanged. The client polls again at once with the same cursor.
   */
  typingOnly?: true;
}

/** The nicknames of the browsers polling a room (one per browser, by `client`). */
export interface People {
  /** The room's presence version: the client sends it back as `people=`. */
  version: number;
  /** At most `limits.maxPeopleListed` nicknames, sorted. */
  names: string[];
  /** How many more are online beyond `names`. */
  more: number;
}

/** One person typing: their nickname, and their browser's tag in the room. */
export interface Typist {
  nickname: string;
  /**
   * The browser's tag in the room: an opaque string the server derives from
   * the room and the browser's `client` id (server/presence/tag.ts), never
   * the id itself, so no answer carries another browser's id. The same
   * browser has the same tag in a room on every process. The field keeps
   * its old name so pages loaded before the change still tell typists
   * apart by it; a poll is never told its own typing, so they have
   * nothing to hide either.
   */
  client: string;
}

/** `POST /send`: answered only once the message is stored. */
export interface SendAnswer {
  status: 'ok';
  id: number;
  message: Message;
}

/** `GET /history`: the latest page before `before`, oldest first. */
export interface HistoryAnswer {
  messages: Message[];
  /**
   * Present (true) when the page reaches back to what retention deleted:
   * there is nothing older to load, because older messages have expired.
   */
  expired?: true;
}

/** Every error: `{"error":{"code","message"}}` with the status of its code. */
export interface ErrorAnswer {
  error: { code: string; message: string };
}

/** What a client posts to `/send` (JSON or a form with the same fields). */
export interface SendFields {
  text: string;
  nickname?: string;
  room?: string;
  /** Idempotency key: a repeat with the same key in the same room stores nothing new. */
  key?: string;
}

/** What a client posts to `POST /typing` (JSON or a form); answered `{"status":"ok"}`. */
export interface TypingFields {
  /** The browser's client id (`CLIENT_PATTERN`). */
  client: string;
  nickname?: string;
  room?: string;
  /**
   * True (a form sends `true`): the person emptied their draft by hand; the
   * room stops showing them at the next typing wake. A sent message needs
   * no notice: the message ends its author's typing.
   */
  stopped?: boolean;
}

/** The contract's limits, each used by the validation, the error messages and the client. */
export const limits = Object.freeze({
  /** Characters (code points) of a message's text, after trimming. */
  maxText: 2000,
  /** Characters (code points) of a nickname, after trimming. */
  maxNickname: 32,
  /** Messages in one `/recv` answer, and the largest `/history` page. */
  pageSize: 100,
  /** `/history` page size when `limit` is not given. */
  defaultHistoryLimit: 50,
  /** Largest request body of `POST /send`, in bytes. */
  maxBodyBytes: 16 * 1024,
  /**
   * Fields a `POST /send` or `POST /typing` body may have, JSON or form
   * (past it, 400 `too_many_fields`). Fields a route does not read are
   * ignored; the body limit bounds the work already, and this keeps a body
   * of thousands of empty fields from costing more.
   */
  maxFields: 100,
  /** Nicknames listed in `people.names`; the rest are counted in `people.more`. */
  maxPeopleListed: 50,
  /**
   * Typists named in one answer's `typing`; the rest are counted in
   * `typingMore`, so the typing part of an answer stays small however many type.
   */
  maxTypistsNamed: 5,
  /** A page sends `POST /typing` at most this often while its person types (ms). */
  typingIntervalMs: 2_500,
  /** A typist is shown for this long after their last `POST /typing` (ms). */
  typingTtlMs: 5_000,
});

/** Room names: lower-case letters, digits, `_` and `-`, 1–32 characters. */
export const ROOM_PATTERN = /^[a-z0-9][a-z0-9_-]{0,31}$/;
/** Idempotency keys. */
export const KEY_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** The client id of `/recv` (the online count): one per browser, shared by its tabs. */
export const CLIENT_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;

export const DEFAULT_ROOM = 'main';
export const DEFAULT_NICKNAME = 'Anonymous';
