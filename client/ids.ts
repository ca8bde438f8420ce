/**
 * Random ids for idempotency keys and the tab's `client` id.
 *
 * `crypto.getRandomValues` rather than `crypto.randomUUID`: the latter exists
 * only in secure contexts, and the chat is often opened over plain HTTP on a
 * LAN address. 16 random bytes in base64url are 22 characters of
 * `[A-Za-z0-9_-]`, which both the `key` and the `client` patterns accept.
 */
export function randomId(bytes = 16): string {
  const data = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...data))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}
