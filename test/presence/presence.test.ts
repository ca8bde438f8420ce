/** `LocalPresence`: the online count of one process, with a clock the tests control. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_NICKNAME } from '../../protocol/protocol.ts';
import { peopleOf } from '../../server/presence/people.ts';
import { LocalPresence } from '../../server/presence/presence.ts';
import { ManualClock } from '../helpers/manual-clock.ts';

describe('LocalPresence', () => {
  it('counts a client within the window and forgets it after', () => {
    const clock = new ManualClock(1_000);
    const presence = new LocalPresence(100, () => clock.now());
    presence.touch('main', 'tab-1');
    presence.touch('main', 'tab-2');
    presence.touch('dev', 'tab-3');
    expect(presence.count('main')).toBe(2);
    clock.advance(60);
    presence.touch('main', 'tab-1');
    clock.advance(60);
    expect(presence.count('main')).toBe(1);
    presence.leave('main', 'tab-1');
    expect(presence.count('main')).toBe(0);
    expect(presence.count('dev')).toBe(0);
  });

  it('says whether a touch is the first of a client in the room', () => {
    const clock = new ManualClock(0);
    const presence = new LocalPresence(100, () => clock.now());
    expect(presence.touch('main', 'tab-1')).toBe(true);
    expect(presence.touch('main', 'tab-1')).toBe(false);
    expect(presence.touch('dev', 'tab-1')).toBe(true);
    clock.advance(500); // out of the window: a newcomer again
    expect(presence.touch('main', 'tab-1')).toBe(true);
  });

  describe('when strangers name 50,000 rooms', () => {
    it('drops the rooms whose clients all left the window as new ones come', () => {
      const clock = new ManualClock(0);
      const presence = new LocalPresence(1_000, () => clock.now());
      for (let i = 0; i < 50_000; i += 1) {
        clock.advance(1); // one new room a millisecond: at most ~1,000 are in the window
        presence.touch(`room-${i}`, `client-${i}`);
      }
      expect(presence.rooms).toBeLessThanOrEqual(1_002);
    });

    it('keeps at most maxRooms rooms even when all are fresh', () => {
      const clock = new ManualClock(0); // time stands still: every room stays fresh
      const presence = new LocalPresence(60_000, () => clock.now(), 500);
      for (let i = 0; i < 50_000; i += 1) presence.touch(`room-${i}`, `client-${i}`);
      expect(presence.rooms).toBeLessThanOrEqual(501);
    });
  });

  describe('people', () => {
    it('lists each client under its last nickname, sorted, Anonymous without one', () => {
      const presence = new LocalPresence(60_000);
      presence.touch('main', 'tab-1', 'Zoe');
      presence.touch('main', 'tab-2');
      presence.touch('main', 'tab-3', 'Ann');
      expect(presence.people('main')).toEqual(peopleOf(['Ann', DEFAULT_NICKNAME, 'Zoe'], 3));
      expect(presence.people('main').names).toEqual(['Ann', DEFAULT_NICKNAME, 'Zoe']);
    });

    it('changes version when someone comes, renames, leaves or expires, and not otherwise', () => {
      const clock = new ManualClock(1_000);
      const presence = new LocalPresence(100, () => clock.now());
      presence.touch('main', 'tab-1', 'Ann');
      const one = presence.people('main').version;
      presence.touch('main', 'tab-1', 'Ann');
      expect(presence.people('main').version).toBe(one);
      presence.touch('main', 'tab-2', 'Bob');
      const two = presence.people('main').version;
      expect(two).not.toBe(one);
      presence.touch('main', 'tab-2', 'Robert');
      expect(presence.people('main').version).not.toBe(two);
      presence.leave('main', 'tab-2');
      expect(presence.people('main').version).toBe(one);
      clock.advance(60);
      presence.touch('main', 'tab-3', 'Cy');
      clock.advance(60); // Ann falls out of the window
      expect(presence.people('main')).toEqual(peopleOf(['Cy'], 1));
    });

    it('gives the same version for the same list, whatever the order of arrival', () => {
      const a = new LocalPresence(60_000);
      const b = new LocalPresence(60_000);
      a.touch('main', 'tab-1', 'Ann');
      a.touch('main', 'tab-2', 'Bob');
      b.touch('main', 'tab-9', 'Bob');
      b.touch('main', 'tab-8', 'Ann');
      expect(a.people('main').version).toBe(b.people('main').version);
    });
  });
});
