/**
 * What the tabs of one room tell each other over their BroadcastChannel
 * (`lpchat:<room>`), besides the election's own votes.
 *
 * - `answer`: a `/recv` answer, exactly as the leader got it; each tab
 *   applies it against its own cursor (`room-state.ts`). With `to`, it is
 *   the latest state for a tab that just said hello, and only that tab reads it.
 * - `status`: the leader's connection status and whether it is seen.
 * - `hello`: a tab started following, or became visible; the leader answers
 *   with its status and the latest state, and a hidden leader hands over to
 *   a visible tab.
 * - `handover`: the leader asks the tab `to` to take over.
 *
 * Any page of the origin can post on the channel, so each tab reads a note
 * only through `parseNote`: one of the wrong shape, with an id or cursor the
 * server would refuse, or too large, is dropped. A forged note must never
 * stop a tab (a cursor the server refuses would end its poll for good).
 */
import { limits, type Message, type RecvAnswer } from '../../protocol/protocol.ts';
import { ApiError } from '../api.ts';
import type { ConnectionStatus } from '../poll.ts';

/** An `ApiError` as a structured clone carries it (a class's prototype does not cross). */
export interface WireError {
  message: string;
  status: number;
  code: string;
  retryAfterMs: number | undefined;
}

export type TabNote =
  | { kind: 'answer'; from: string; answer: RecvAnswer; to?: string }
  | {
      kind: 'status';
      from: string;
      status: ConnectionStatus;
      error: WireError | undefined;
      visible: boolean;
    }
  | { kind: 'hello'; from: string; visible: boolean }
  | { kind: 'handover'; from: string; to: string };

export function toWire(error: ApiError | undefined): WireError | undefined {
  if (error === undefined) return undefined;
  const { message, status, code, retryAfterMs } = error;
  return { message, status, code, retryAfterMs };
}

export function fromWire(error: WireError | undefined): ApiError | undefined {
  if (error === undefined) return undefined;
  return new ApiError(error.message, error.status, error.code, error.retryAfterMs);
}

/** The largest id or cursor the server reads (`since` has at most 15 digits). */
const MAX_ID = 999_999_999_999_999;
const MAX_ID_LENGTH = 64;
const STATUSES: readonly string[] = ['connecting', 'connected', 'reconnecting', 'stopped'];

type Fields = Record<string, unknown>;

const isObject = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isCount = (value: unknown, max = MAX_ID): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= max;
const isId = (value: unknown): value is string =>
  typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH;
const isText = (value: unknown, max: number): value is string =>
  typeof value === 'string' && value.length <= max;
const isFlag = (value: unknown) => value === undefined || value === true;

function isMessage(value: unknown, room: string): value is Message {
  if (!isObject(value)) return false;
  return (
    isCount(value.id) &&
    value.id > 0 &&
    value.room === room &&
    // Code points: at most two UTF-16 units each.
    isText(value.nickname, limits.maxNickname * 2) &&
    isText(value.text, limits.maxText * 2) &&
    isText(value.time, 64)
  );
}

function isAnswer(value: unknown, room: string): value is RecvAnswer {
  if (!isObject(value)) return false;
  const { messages, cursor, online, people, typing } = value;
  if (!Array.isArray(messages) || messages.length > limits.pageSize) return false;
  if (!messages.every((message) => isMessage(message, room))) return false;
  if (!isCount(cursor) || !isCount(online)) return false;
  if (!isFlag(value.reset) || !isFlag(value.expired) || !isFlag(value.typingOnly)) return false;
  if (people !== undefined) {
    if (!isObject(people) || !isCount(people.version) || !isCount(people.more)) return false;
    const { names } = people;
    if (!Array.isArray(names) || names.length > limits.maxPeopleListed) return false;
    if (!names.every((name) => isText(name, limits.maxNickname * 2))) return false;
  }
  if (typing !== undefined) {
    if (!Array.isArray(typing) || typing.length > limits.maxPeopleListed) return false;
    const typist = (entry: unknown) =>
      isObject(entry) && isText(entry.nickname, limits.maxNickname * 2) && isId(entry.client);
    if (!typing.every(typist)) return false;
  }
  return true;
}

function isWireError(value: unknown): value is WireError | undefined {
  if (value === undefined) return true;
  if (!isObject(value)) return false;
  return (
    isText(value.message, 500) &&
    isCount(value.status, 999) &&
    isText(value.code, 64) &&
    (value.retryAfterMs === undefined || isCount(value.retryAfterMs))
  );
}

/** `data` as a note of the room `room`'s tabs, or undefined when it is not a valid one. */
export function parseNote(data: unknown, room: string): TabNote | undefined {
  if (!isObject(data) || !isId(data.from)) return undefined;
  switch (data.kind) {
    case 'answer':
      if (data.to !== undefined && !isId(data.to)) return undefined;
      return isAnswer(data.answer, room) ? (data as TabNote) : undefined;
    case 'status':
      if (typeof data.status !== 'string' || !STATUSES.includes(data.status)) return undefined;
      if (typeof data.visible !== 'boolean' || !isWireError(data.error)) return undefined;
      return data as TabNote;
    case 'hello':
      return typeof data.visible === 'boolean' ? (data as TabNote) : undefined;
    case 'handover':
      return isId(data.to) ? (data as TabNote) : undefined;
    default:
      return undefined;
  }
}
