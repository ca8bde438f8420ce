/**
 * The page's use of `localStorage`, guarded. Storage can be missing or
 * refuse access (blocked cookies, some private modes, a sandboxed frame
 * throw a SecurityError on the first touch) or be full (QuotaExceededError).
 * The chat must still work then: it only forgets the nickname and which
 * messages were ours across reloads.
 */

/** The browser's storage, or undefined when it cannot be used. Looked up on every call: reading `window.localStorage` itself may throw. */
function storage(): Storage | undefined {
  try {
    return globalThis.localStorage ?? undefined;
  } catch {
    return undefined;
  }
}

/** The stored string, or undefined when there is none or storage is blocked. */
export function loadItem(key: string): string | undefined {
  try {
    return storage()?.getItem(key) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Stores a string; returns false when storage is blocked or full (the caller carries on). */
export function saveItem(key: string, value: string): boolean {
  const store = storage();
  if (!store) return false;
  try {
    store.setItem(key, value);
    return true;
  } catch {
    return false;
  }
}
