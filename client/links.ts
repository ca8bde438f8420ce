/**
 * Finding the links in a message's text, so the page can make them
 * clickable without ever treating the text as HTML.
 *
 * Only `http:` and `https:` addresses that start with their scheme become
 * links: `javascript:`, `data:` and every other scheme stay plain text, so a
 * message can never make a click run code. The result is a list of plain
 * strings and links; the view builds an `<a>` for each link as a DOM node
 * and puts the text in with `textContent` (view.ts).
 *
 * Trailing punctuation is not part of an address ("see https://x.org."),
 * nor is a closing bracket that has no opening one inside the address
 * ("(https://x.org/a)"), as in most chat apps and e-mail clients.
 *
 * A link shows where it goes:
 * - An invisible character (zero-width space and joiners, soft hyphen,
 *   direction marks, overrides and isolates, tag characters) ends an
 *   address, so nothing hidden rides along in it.
 * - An address with userinfo (`https://google.com@evil.example`, which goes
 *   to evil.example) stays plain text: its start reads as a host it does
 *   not go to.
 * - A host written with characters outside ASCII (`https://аpple.com`, a
 *   Cyrillic а) is shown as the ASCII name the browser will ask for
 *   (`xn--pple-43d.com`), so a look-alike cannot pass for the host it
 *   imitates. Such a link's text is the address with its host so written;
 *   every other part's text is the message's own, and, joined, they are
 *   the text.
 */

/** A run of a message's text: plain, or a link with the address to open. */
export type TextPart = { text: string } | { text: string; href: string };

/**
 * Characters an address runs over: anything but spaces, quotes, angle
 * brackets and invisible characters (soft hyphen, Arabic letter mark,
 * Mongolian vowel separator, zero-width and direction marks, overrides,
 * isolates, word joiner and invisible operators, the byte-order mark, tags).
 */
const CANDIDATE =
  /\bhttps?:\/\/[^\s<>"'`\u00AD\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u206F\uFEFF\u{E0000}-\u{E007F}]+/giu;
/** Characters that end a sentence rather than an address. */
const TRAILING = /[.,;:!?…]+$/;

/** The message's text split into plain runs and links, in order; joined, they are the text. */
export function splitLinks(text: string): TextPart[] {
  const parts: TextPart[] = [];
  let plainFrom = 0;
  for (const match of text.matchAll(CANDIDATE)) {
    const address = trimAddress(match[0]);
    const url = safeUrl(address);
    if (url === undefined) continue;
    if (match.index > plainFrom) parts.push({ text: text.slice(plainFrom, match.index) });
    parts.push({ text: shownAddress(address, url), href: url.href });
    plainFrom = match.index + address.length;
  }
  if (plainFrom < text.length) parts.push({ text: text.slice(plainFrom) });
  return parts;
}

/** The address without the punctuation and unbalanced brackets of the sentence around it. */
function trimAddress(candidate: string): string {
  let address = candidate;
  for (;;) {
    const before = address;
    address = address.replace(TRAILING, '');
    for (const [open, close] of ['()', '[]', '{}']) {
      if (address.endsWith(close!) && count(address, open!) < count(address, close!)) {
        address = address.slice(0, -1);
      }
    }
    if (address === before) return address;
  }
}

function count(text: string, character: string): number {
  return text.split(character).length - 1;
}

/** The address parsed, only when it is http(s) with a host and without userinfo. */
function safeUrl(address: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.hostname === '') return undefined;
  // `user:pass@` or a bare `@` before the host: the text before it is not where it goes.
  if (url.username !== '' || url.password !== '' || /^https?:\/\/[^/?#]*@/i.test(address)) {
    return undefined;
  }
  return url;
}

/** `address` as written, but for a host outside ASCII, written as the ASCII name it resolves as. */
function shownAddress(address: string, url: URL): string {
  const start = address.indexOf('//') + 2;
  const end = address.slice(start).search(/[/?#]|$/) + start;
  const authority = address.slice(start, end);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII is the point
  if (/^[\u0000-\u007F]*$/.test(authority)) return address;
  const port = url.port === '' ? '' : `:${url.port}`;
  return address.slice(0, start) + url.hostname + port + address.slice(end);
}
