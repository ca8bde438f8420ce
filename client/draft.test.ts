/** The composer's rules: when the counter shows, and why a send is refused. */
import { describe, expect, it } from 'vitest';
import { limits } from '../protocol/protocol.ts';
import { COUNTER_FROM, countCharacters, draftState, refusal } from './draft.ts';

describe('countCharacters', () => {
  it('should count an emoji or an accented letter as one character, as the server does', () => {
    expect(countCharacters('😀é')).toBe(2);
    expect('😀é'.length).toBe(3);
  });
});

describe('draftState', () => {
  describe('when the draft is far from the limit', () => {
    it('should show no counter', () => {
      expect(draftState('hello')).toEqual({ length: 5, counter: undefined, over: false });
    });
  });

  describe('when the draft nears the limit', () => {
    it('should show how many characters it has, out of the limit', () => {
      const state = draftState('a'.repeat(COUNTER_FROM));
      expect(state.counter).toBe('1,800 / 2,000');
      expect(state.over).toBe(false);
    });

    it('should count what will be sent: trimmed', () => {
      expect(draftState(`  ${'a'.repeat(limits.maxText)}\n\n`).over).toBe(false);
    });
  });

  describe('when the draft is over the limit', () => {
    it('should say by how much, keeping every character', () => {
      const state = draftState('a'.repeat(3089));
      expect(state).toEqual({ length: 3089, counter: '3,089 / 2,000: 1,089 too many', over: true });
    });
  });
});

describe('refusal', () => {
  describe('when the message is empty or blank', () => {
    it('should ask for a message', () => {
      expect(refusal('', 'Ann')).toBe('Type a message first.');
    });

    it('should say that only spaces are not sent', () => {
      expect(refusal('   \n  ', 'Ann')).toMatch(/only spaces or blank lines is not sent/);
    });
  });

  describe('when the message is over the limit', () => {
    it('should give the length, the limit and how much to cut', () => {
      expect(refusal('a'.repeat(2001), 'Ann')).toBe(
        'This message is 2,001 characters long; the limit is 2,000. Shorten it by 1 to send it.',
      );
    });

    it('should accept exactly the limit', () => {
      expect(refusal('😀'.repeat(limits.maxText), 'Ann')).toBeUndefined();
    });
  });

  describe('when the nickname is over its limit', () => {
    it('should say so rather than cut it', () => {
      expect(refusal('hi', 'n'.repeat(33))).toMatch(
        /nickname is 33 characters long; the limit is 32/,
      );
    });

    it('should accept a blank nickname (the server says Anonymous)', () => {
      expect(refusal('hi', '  ')).toBeUndefined();
    });
  });
});
