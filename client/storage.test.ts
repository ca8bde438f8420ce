/**
 * Storage that refuses access. Browsers throw a `SecurityError` on the first
 * touch of `localStorage` when site data is blocked, and a
 * `QuotaExceededError` on writes when it is full; here `localStorage` is
 * given that behaviour (Node has no storage of its own). The page working
 * with storage blocked in a real Chromium is in `e2e/storage.spec.ts`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadItem, saveItem } from './storage.ts';

function installStorage(descriptor: PropertyDescriptor): void {
  Object.defineProperty(globalThis, 'localStorage', { configurable: true, ...descriptor });
}

afterEach(() => {
  Reflect.deleteProperty(globalThis, 'localStorage');
});

describe('storage', () => {
  describe('when the browser blocks site data', () => {
    it('should load nothing and refuse to save, without throwing', () => {
      installStorage({
        get() {
          throw new DOMException('Access is denied for this document.', 'SecurityError');
        },
      });
      expect(loadItem('chat.nickname')).toBeUndefined();
      expect(saveItem('chat.nickname', 'Ann')).toBe(false);
    });
  });

  describe('when storage is full', () => {
    it('should report the write as not saved', () => {
      installStorage({
        value: {
          getItem: () => null,
          setItem: () => {
            throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
          },
        },
      });
      expect(saveItem('chat.nickname', 'Ann')).toBe(false);
      expect(loadItem('chat.nickname')).toBeUndefined();
    });
  });

  describe('when storage works', () => {
    it('should give back what was saved', () => {
      const items = new Map<string, string>();
      installStorage({
        value: {
          getItem: (key: string) => items.get(key) ?? null,
          setItem: (key: string, value: string) => items.set(key, value),
        },
      });
      expect(saveItem('chat.nickname', 'Zoë')).toBe(true);
      expect(loadItem('chat.nickname')).toBe('Zoë');
    });
  });
});
