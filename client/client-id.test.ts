import { describe, expect, it } from 'vitest';
import { CLIENT_PATTERN } from '../protocol/protocol.ts';
import { browserClientId } from './client-id.ts';

/** A storage of the browser, shared by its tabs. */
function storage(blocked = false) {
  const items = new Map<string, string>();
  return {
    items,
    load: (key: string) => (blocked ? undefined : items.get(key)),
    save: (key: string, value: string) => {
      if (blocked) return false;
      items.set(key, value);
      return true;
    },
  };
}

describe('browserClientId', () => {
  it('should give every tab of a browser the same id, one the server accepts', () => {
    const browser = storage();
    const ids = Array.from({ length: 8 }, () => browserClientId(browser.load, browser.save));
    expect(new Set(ids).size).toBe(1);
    expect(ids[0]).toMatch(CLIENT_PATTERN);
  });

  it('should be unguessable: at least 128 random bits', () => {
    const id = browserClientId(storage().load, storage().save);
    // Base64url: 6 bits a character.
    expect(id.length * 6).toBeGreaterThanOrEqual(128);
    const ids = new Set(
      Array.from({ length: 1_000 }, () => browserClientId(storage().load, () => false)),
    );
    expect(ids.size).toBe(1_000);
  });

  it('should give two browsers two ids', () => {
    const one = storage();
    const other = storage();
    expect(browserClientId(one.load, one.save)).not.toBe(browserClientId(other.load, other.save));
  });

  it('should replace a stored value the server would refuse', () => {
    const browser = storage();
    browser.items.set('chat.client', 'bad id!');
    const id = browserClientId(browser.load, browser.save);
    expect(id).toMatch(CLIENT_PATTERN);
    expect(browser.items.get('chat.client')).toBe(id);
  });

  it('should still give an id with storage blocked (one per page load then)', () => {
    const blocked = storage(true);
    expect(browserClientId(blocked.load, blocked.save)).toMatch(CLIENT_PATTERN);
  });
});
