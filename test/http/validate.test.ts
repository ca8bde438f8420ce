/** The edge's parsers on their own: untrusted values in, typed values or the contract's error code out. */
import { describe, expect, it } from 'vitest';
import { limits } from '../../protocol/protocol.ts';
import { HttpError } from '../../server/core/errors.ts';
import {
  parseClient,
  parseId,
  parseLimit,
  parseNewMessage,
  parseRoom,
} from '../../server/http/validate.ts';

/** The error code `work` throws. */
function codeOf(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    if (error instanceof HttpError) return error.code;
    throw error;
  }
  throw new Error('it did not throw');
}

describe('parseRoom', () => {
  it('defaults to main and takes a valid name', () => {
    expect(parseRoom(undefined)).toBe('main');
    expect(parseRoom('')).toBe('main');
    expect(parseRoom('dev_2-b')).toBe('dev_2-b');
  });

  it('refuses upper case, a leading dash, 33 characters and arrays', () => {
    for (const bad of ['Dev', '-dev', 'a'.repeat(33), ['a', 'b']]) {
      expect(codeOf(() => parseRoom(bad))).toBe('invalid_room');
    }
  });
});

describe('parseId', () => {
  it('reads a non-negative integer and leaves an absent one undefined', () => {
    expect(parseId('0')).toBe(0);
    expect(parseId('42')).toBe(42);
    expect(parseId(undefined)).toBeUndefined();
  });

  it('refuses negatives, fractions, exponents and numbers past 15 digits', () => {
    for (const bad of ['-1', '1.5', '1e3', '1'.repeat(16), ' 1']) {
      expect(codeOf(() => parseId(bad))).toBe('invalid_cursor');
    }
  });
});

describe('parseLimit', () => {
  it('takes 1 to the page size and refuses 0 and more', () => {
    expect(parseLimit(undefined, 50)).toBe(50);
    expect(parseLimit(String(limits.pageSize), 50)).toBe(limits.pageSize);
    expect(codeOf(() => parseLimit('0', 50))).toBe('invalid_limit');
    expect(codeOf(() => parseLimit(String(limits.pageSize + 1), 50))).toBe('invalid_limit');
  });
});

describe('parseClient', () => {
  it('takes 8 to 64 safe characters', () => {
    expect(parseClient('abcdEFGH')).toBe('abcdEFGH');
    expect(codeOf(() => parseClient('short'))).toBe('invalid_client');
    expect(codeOf(() => parseClient('has space!'))).toBe('invalid_client');
  });
});

describe('parseNewMessage', () => {
  it('trims, defaults the nickname and room, and keeps a key', () => {
    expect(parseNewMessage({ text: '  hi  ', key: 'k-1' })).toEqual({
      room: 'main',
      nickname: 'Anonymous',
      text: 'hi',
      key: 'k-1',
    });
  });

  it('refuses a text with a direction override or an isolate left open, keeps closed ones', () => {
    const refused = [
      '\u202A',
      '\u202B',
      '\u202C',
      '\u202D',
      '\u202E',
      '\u2066',
      '\u2067x',
      'x\u2069',
    ];
    for (const control of refused) {
      expect(codeOf(() => parseNewMessage({ text: `see https://x.org/${control}gpj.exe` }))).toBe(
        'invalid_text',
      );
    }
    for (const kept of ['שלום مرحبا', 'a \u2067עולם\u2069 b', '\u2066x \u2068y\u2069\u2069']) {
      expect(parseNewMessage({ text: kept }).text).toBe(kept);
    }
  });

  it('counts characters as a person does: 2,000 emoji fit, 2,001 do not', () => {
    expect(parseNewMessage({ text: '😀'.repeat(limits.maxText) }).text).toHaveLength(
      2 * limits.maxText,
    );
    expect(codeOf(() => parseNewMessage({ text: '😀'.repeat(limits.maxText + 1) }))).toBe(
      'text_too_long',
    );
  });

  it('strips control characters but keeps tabs and new lines', () => {
    expect(parseNewMessage({ text: 'a\u0000b\tc\nd\u0007' }).text).toBe('ab\tc\nd');
  });

  it('answers each bad field with its own code', () => {
    expect(codeOf(() => parseNewMessage(null))).toBe('invalid_body');
    expect(codeOf(() => parseNewMessage([]))).toBe('invalid_body');
    expect(codeOf(() => parseNewMessage({}))).toBe('text_required');
    expect(codeOf(() => parseNewMessage({ text: '   ' }))).toBe('text_required');
    expect(codeOf(() => parseNewMessage({ text: 5 }))).toBe('invalid_text');
    expect(codeOf(() => parseNewMessage({ text: 'x', nickname: 5 }))).toBe('invalid_nickname');
    expect(codeOf(() => parseNewMessage({ text: 'x', nickname: 'n'.repeat(33) }))).toBe(
      'nickname_too_long',
    );
    expect(codeOf(() => parseNewMessage({ text: 'x', key: 'bad key' }))).toBe('invalid_key');
  });
});
