/**
 * Untrusted input is parsed here, at the edge, into typed values; past this
 * module the code trusts its types. Each failure throws the error code of
 * the contract (see `errors.ts`).
 */
import {
  CLIENT_PATTERN as CLIENT,
  DEFAULT_NICKNAME,
  DEFAULT_ROOM,
  KEY_PATTERN as KEY,
  limits,
  ROOM_PATTERN as ROOM,
} from '../../protocol/protocol.ts';
import { httpError } from '../core/errors.ts';
import type { NewMessage } from '../store/store.ts';

export { DEFAULT_NICKNAME, DEFAULT_ROOM };

const MAX_TEXT = limits.maxText;
const MAX_NICKNAME = limits.maxNickname;

/** Length in characters as a person counts them (code points), not UTF-16 units. */
function length(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/**
 * A lone surrogate (half of a UTF-16 pair, e.g. from JSON `"\ud800"`) is not
 * a character: every store writes UTF-8, which cannot hold it, and reads back
 * U+FFFD instead, so the text delivered live would not be the text stored.
 * With the `u` flag this class matches only unpaired halves.
 */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Direction overrides (U+202A-U+202E) and isolates (U+2066-U+2069) make the
 * text after them display in another order: in a nickname, "Ann" + U+202E +
 * "nimda" shows as "Annadmin", and it runs on into the message beside it.
 */
const DIRECTION_CONTROL = /[\u202A-\u202E\u2066-\u2069]/;

/**
 * In a text, right-to-left writers may need isolates (U+2066-U+2068, each
 * closed by U+2069), which keep their effect inside them; what is refused
 * is what reorders the text after it: an override or embedding
 * (U+202A-U+202E), or an isolate left open, would show a link or a name
 * beside it as another (an address shown reversed).
 */
function directionsClosed(text: string): boolean {
  if (/[\u202A-\u202E]/.test(text)) return false;
  let open = 0;
  for (const match of text.matchAll(/[\u2066-\u2069]/g)) {
    open += match[0] === '\u2069' ? -1 : 1;
    if (open < 0) return false;
  }
  return open === 0;
}

/**
 * Control characters other than tab and newline have no place in a chat
 * line: C0, DEL and C1 (U+0080-U+009F, invisible, and a text of them alone
 * would be a message that shows nothing).
 */
function clean(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  return text.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g, '').trim();
}

export function parseRoom(value: unknown): string {
  if (value === undefined || value === '') return DEFAULT_ROOM;
  if (typeof value !== 'string' || !ROOM.test(value)) throw httpError('invalid_room');
  return value;
}

/** A message id in a query (`since`, `before`); undefined when absent. */
export function parseId(value: unknown): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) throw httpError('invalid_cursor');
  return Number(value);
}

export function parseLimit(value: unknown, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  if (typeof value !== 'string' || !/^\d{1,3}$/.test(value)) throw httpError('invalid_limit');
  const limit = Number(value);
  if (limit < 1 || limit > limits.pageSize) throw httpError('invalid_limit');
  return limit;
}

export function parseClient(value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !CLIENT.test(value)) throw httpError('invalid_client');
  return value;
}

/**
 * The `client` field of a body whose limit counts per person (send,
 * typing), read before the body is validated: a client id, or undefined
 * (the address's anonymous share) for anything else, which validation then
 * refuses or ignores.
 */
export function shareClient(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const client = (body as Record<string, unknown>).client;
  return typeof client === 'string' && CLIENT.test(client) ? client : undefined;
}

/**
 * A nickname, as `POST /send`, `POST /typing` and `GET /recv` take it:
 * cleaned, spaces collapsed; absent or blank, `Anonymous`.
 */
export function parseNickname(value: unknown): string {
  if (value === undefined || value === null) return DEFAULT_NICKNAME;
  if (typeof value !== 'string') {
    throw httpError('invalid_nickname', 'Field "nickname" must be a string.');
  }
  if (LONE_SURROGATE.test(value)) throw httpError('invalid_unicode');
  if (DIRECTION_CONTROL.test(value)) throw httpError('invalid_nickname');
  const cleaned = clean(value).replace(/\s+/g, ' ');
  if (length(cleaned) > MAX_NICKNAME) throw httpError('nickname_too_long');
  return cleaned === '' ? DEFAULT_NICKNAME : cleaned;
}

/**
 * The nickname of a poll (`/recv?nickname=`): checked as a sent one, but a
 * bad one is left out (the client is listed as Anonymous), never refused: a
 * poll refused over a nickname being typed would stop the page's loop.
 */
export function pollNickname(value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined;
  try {
    const nickname = parseNickname(value);
    return nickname === DEFAULT_NICKNAME ? undefined : nickname;
  } catch {
    return undefined;
  }
}

/**
 * The version of the room's list a poll holds (`/recv?people=`): an
 * unsigned 32-bit number; anything else is as none (the answer carries the
 * whole list), never refused.
 */
export function parsePeopleVersion(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^\d{1,10}$/.test(value)) return undefined;
  const version = Number(value);
  return version <= 0xffffffff ? version : undefined;
}

/** A JSON body holds at most as many fields as a form may (body-parser counts a form's). */
function checkFieldCount(fields: Record<string, unknown>): void {
  let count = 0;
  for (const _ in fields) if (++count > limits.maxFields) throw httpError('too_many_fields');
}

/** The fields of `POST /typing`, from a JSON object or a parsed form. */
export function parseTyping(body: unknown): {
  room: string;
  client: string;
  nickname: string;
  stopped: boolean;
} {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw httpError('invalid_body');
  }
  const fields = body as Record<string, unknown>;
  checkFieldCount(fields);
  if (fields.client === undefined || fields.client === null || fields.client === '') {
    throw httpError('client_required');
  }
  const client = parseClient(fields.client);
  if (client === undefined) throw httpError('client_required');
  // Anything but true (JSON) or "true" (a form) is someone still typing: the hint errs towards showing.
  const stopped = fields.stopped === true || fields.stopped === 'true';
  return {
    room: parseRoom(fields.room),
    client,
    nickname: parseNickname(fields.nickname),
    stopped,
  };
}

/** The fields of `POST /send`, from a JSON object or a parsed form. */
export function parseNewMessage(body: unknown): NewMessage {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw httpError('invalid_body');
  }
  const fields = body as Record<string, unknown>;
  checkFieldCount(fields);

  if (fields.text === undefined || fields.text === null) throw httpError('text_required');
  if (typeof fields.text !== 'string') throw httpError('invalid_text');
  if (LONE_SURROGATE.test(fields.text)) throw httpError('invalid_unicode');
  if (!directionsClosed(fields.text)) throw httpError('invalid_text');
  const text = clean(fields.text);
  if (text === '') throw httpError('text_required');
  if (length(text) > MAX_TEXT) throw httpError('text_too_long');

  const nickname = parseNickname(fields.nickname);
  const room = parseRoom(fields.room);

  // Optional: the sender's browser, for its share of the send limit (rate-limit.ts); not stored.
  if (fields.client !== undefined) parseClient(fields.client);

  let key: string | undefined;
  if (fields.key !== undefined && fields.key !== null && fields.key !== '') {
    if (typeof fields.key !== 'string' || !KEY.test(fields.key)) throw httpError('invalid_key');
    key = fields.key;
  }

  return { room, nickname, text, key };
}
