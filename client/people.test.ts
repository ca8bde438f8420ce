/** How the list of who is here is worded, and what each poll says back to the server. */
import { describe, expect, it } from 'vitest';
import { limits } from '../protocol/protocol.ts';
import { distinctNames, PeopleList, peopleParts, peopleText, pollNickname } from './people.ts';

describe('peopleText', () => {
  it('should name one person', () => {
    expect(peopleText({ names: ['Ann'], more: 0 })).toBe('Ann');
  });

  it('should join two with "and" and more with commas', () => {
    expect(peopleText({ names: ['Ann', 'Bob'], more: 0 })).toBe('Ann and Bob');
    expect(peopleText({ names: ['Ann', 'Bob', 'Cy'], more: 0 })).toBe('Ann, Bob and Cy');
  });

  it('should count those beyond the listed names', () => {
    expect(peopleText({ names: ['Ann', 'Bob'], more: 1 })).toBe('Ann, Bob and 1 more');
    expect(peopleText({ names: ['Ann'], more: 1250 })).toBe('Ann and 1,250 more');
  });

  it('should count people when no name is listed', () => {
    expect(peopleText({ names: [], more: 0 })).toBe('');
    expect(peopleText({ names: [], more: 1 })).toBe('1 person');
    expect(peopleText({ names: [], more: 3 })).toBe('3 people');
  });
});

describe('peopleParts', () => {
  it('should mark the nicknames apart from the words between them', () => {
    expect(peopleParts({ names: ['Ann', '<b>Bob</b>'], more: 2 })).toEqual([
      { text: 'Ann', person: true },
      { text: ', ', person: false },
      { text: '<b>Bob</b>', person: true },
      { text: ' and 2 more', person: false },
    ]);
  });
});

describe('distinctNames', () => {
  it('should number a name shared by several, in list order', () => {
    expect(distinctNames(['Ann', 'Cy', 'Cy', 'Cy'])).toEqual(['Ann', 'Cy', 'Cy (2)', 'Cy (3)']);
    expect(peopleText({ names: ['Cy', 'Cy'], more: 0 })).toBe('Cy and Cy (2)');
  });
});

describe('pollNickname', () => {
  it('should send a nickname trimmed, its spaces folded', () => {
    expect(pollNickname('  Ann   Lee ')).toBe('Ann Lee');
  });

  it('should send none for an empty field', () => {
    expect(pollNickname('   ')).toBeUndefined();
  });

  it('should send none the server would refuse, so the poll is never refused', () => {
    expect(pollNickname('N'.repeat(limits.maxNickname + 1))).toBeUndefined();
    expect(pollNickname('Ann\u202Enimda')).toBeUndefined();
    expect(pollNickname('Ann\uD800')).toBeUndefined();
  });

  it('should count characters as the server does', () => {
    expect(pollNickname('😀'.repeat(limits.maxNickname))).toBe('😀'.repeat(limits.maxNickname));
  });
});

describe('PeopleList', () => {
  describe('before the server has sent a list', () => {
    it('should send no version, only the nickname', () => {
      const list = new PeopleList();
      expect(list.known).toBe(false);
      expect(list.query('Ann')).toEqual({ nickname: 'Ann' });
      expect(list.query('')).toEqual({});
    });

    it('should ignore answers without a list (a server that knows nothing of people)', () => {
      const list = new PeopleList();
      expect(list.take({})).toBeUndefined();
      expect(list.known).toBe(false);
    });
  });

  describe('once the server has sent a list', () => {
    it('should send its version back with each poll', () => {
      const list = new PeopleList();
      const people = { version: 7, names: ['Ann'], more: 0 };
      expect(list.take({ people })).toEqual(people);
      expect(list.query('Ann')).toEqual({ people: '7', nickname: 'Ann' });
    });

    it('should keep the list through answers that carry none, and take a newer one', () => {
      const list = new PeopleList();
      list.take({ people: { version: 7, names: ['Ann'], more: 0 } });
      expect(list.take({})).toBeUndefined();
      expect(list.people?.names).toEqual(['Ann']);
      list.take({ people: { version: 8, names: ['Ann', 'Bob'], more: 0 } });
      expect(list.query('')).toEqual({ people: '8' });
    });

    it('should ask for the whole list again after forgetting it', () => {
      const list = new PeopleList();
      list.take({ people: { version: 7, names: ['Ann'], more: 0 } });
      list.forget();
      expect(list.known).toBe(false);
      expect(list.query('Ann')).toEqual({ nickname: 'Ann' });
    });
  });
});
