/**
 * Refusals in words for the person reading the page. The API's messages
 * are for developers (`Field "room" must match ^[a-z0-9][a-z0-9_-]{0,31}$.`);
 * the page says the same rule as a sentence, and offers the room that was
 * probably meant.
 */
import { ROOM_PATTERN } from '../protocol/protocol.ts';
import type { ApiError } from './api.ts';

/** The rule of `ROOM_PATTERN`, in words. */
export const ROOM_RULE = 'Room names use a–z, 0–9, - and _, up to 32 characters.';

/** Longest part of a bad room name quoted back: enough to recognise it. */
const QUOTED = 40;

export interface RoomRefusal {
  reason: string;
  /** A valid room close to the one asked for ("Dev" → "dev"), when there is one. */
  instead: string | undefined;
}

/** Why this room name cannot be opened, or undefined when it can. */
export function roomRefusal(room: string): RoomRefusal | undefined {
  if (ROOM_PATTERN.test(room)) return undefined;
  const chars = [...room];
  const quoted = chars.length > QUOTED ? `${chars.slice(0, QUOTED).join('')}…` : room;
  const guess = room
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[-_]+/, '')
    .slice(0, 32)
    .replace(/[-_]+$/, '');
  return {
    reason: `“${quoted}” is not a room name. ${ROOM_RULE}`,
    instead: ROOM_PATTERN.test(guess) ? guess : undefined,
  };
}

/** What to tell the person about a refused request: the API's message, unless we have better words. */
export function errorInWords(error: ApiError): string {
  if (error.code === 'invalid_room') return ROOM_RULE;
  return error.message;
}
