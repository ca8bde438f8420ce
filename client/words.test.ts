/** Refusals as the person reading the page is told them. */
import { describe, expect, it } from 'vitest';
import { ApiError } from './api.ts';
import { errorInWords, ROOM_RULE, roomRefusal } from './words.ts';

describe('roomRefusal', () => {
  it('should accept a room name of the pattern', () => {
    expect(roomRefusal('dev')).toBeUndefined();
    expect(roomRefusal('a'.repeat(32))).toBeUndefined();
    expect(roomRefusal('team_2-b')).toBeUndefined();
  });

  it('should refuse a name in capitals in words, and offer it in lower case', () => {
    expect(roomRefusal('Dev')).toEqual({
      reason: '“Dev” is not a room name. Room names use a–z, 0–9, - and _, up to 32 characters.',
      instead: 'dev',
    });
  });

  it('should never show the pattern', () => {
    expect(roomRefusal('Not A Room')?.reason).not.toMatch(/\^|\{0,31\}|\[a-z/);
  });

  it('should offer a room made of the name’s letters and digits', () => {
    expect(roomRefusal('My Room!')?.instead).toBe('my-room');
    expect(roomRefusal('-x')?.instead).toBe('x');
    expect(roomRefusal('a'.repeat(40))?.instead).toBe('a'.repeat(32));
  });

  it('should offer nothing when no letter or digit is left', () => {
    expect(roomRefusal('ééé')?.instead).toBeUndefined();
    expect(roomRefusal('---')?.instead).toBeUndefined();
  });

  it('should quote a long name cut short', () => {
    expect(roomRefusal('X'.repeat(100))?.reason).toMatch(/^“X{40}…” is not a room name/);
  });
});

describe('errorInWords', () => {
  it('should say the room rule for the API’s invalid_room', () => {
    const error = new ApiError(
      'Field "room" must match ^[a-z0-9][a-z0-9_-]{0,31}$.',
      400,
      'invalid_room',
    );
    expect(errorInWords(error)).toBe(ROOM_RULE);
  });

  it('should keep the API’s own words for other refusals', () => {
    expect(errorInWords(new ApiError('Field "text" is required.', 400, 'text_required'))).toBe(
      'Field "text" is required.',
    );
  });
});
