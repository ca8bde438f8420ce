/** Own messages across reloads: a fresh `OwnMessages` over the same storage is a reload. */
import { describe, expect, it } from 'vitest';
import { KEEP, type MarkStorage, OwnMessages } from './own-messages.ts';

function memoryStorage(): MarkStorage & { items: Map<string, string> } {
  const items = new Map<string, string>();
  return {
    items,
    load: (key) => items.get(key),
    save: (key, value) => {
      items.set(key, value);
      return true;
    },
  };
}

const at = (id: number, time = '2026-12-01T10:00:00.000Z') => ({ id, time });

describe('OwnMessages', () => {
  describe('after a reload', () => {
    it('should still know the messages this browser sent, in that room only', () => {
      const storage = memoryStorage();
      new OwnMessages('main', storage).add(at(3));

      const reloaded = new OwnMessages('main', storage);
      expect(reloaded.has(at(3))).toBe(true);
      expect(reloaded.has(at(4))).toBe(false);
      expect(new OwnMessages('dev', storage).has(at(3))).toBe(false);
    });
  });

  describe('when the database was reset and ids start again', () => {
    it('should not take a new message with an old id for ours', () => {
      const storage = memoryStorage();
      new OwnMessages('main', storage).add(at(3, '2026-12-01T10:00:00.000Z'));
      expect(new OwnMessages('main', storage).has(at(3, '2026-12-02T09:00:00.000Z'))).toBe(false);
    });
  });

  describe('when many messages were sent', () => {
    it(`should keep the newest ${KEEP} and drop the oldest`, () => {
      const storage = memoryStorage();
      const own = new OwnMessages('main', storage);
      for (let id = 1; id <= KEEP + 10; id += 1) own.add(at(id));
      const reloaded = new OwnMessages('main', storage);
      expect(reloaded.has(at(10))).toBe(false);
      expect(reloaded.has(at(11))).toBe(true);
      expect(reloaded.has(at(KEEP + 10))).toBe(true);
      expect(JSON.parse(storage.items.get('chat.mine.main')!)).toHaveLength(KEEP);
    });
  });

  describe('when storage is blocked or holds something else', () => {
    it('should still mark messages for the life of the page', () => {
      const blocked: MarkStorage = { load: () => undefined, save: () => false };
      const own = new OwnMessages('main', blocked);
      own.add(at(1));
      expect(own.has(at(1))).toBe(true);
    });

    it('should start empty from a value it cannot read', () => {
      const storage = memoryStorage();
      storage.items.set('chat.mine.main', '{not json');
      expect(new OwnMessages('main', storage).has(at(1))).toBe(false);
    });
  });
});
