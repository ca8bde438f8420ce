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
 */

/** A run of a message's text: plain, or a link with the address to open. */
export type TextPart = { text: string } | { text: string; href: string };

/** Characters an address runs over: anything but spaces, quotes and angle brackets. */
const CANDIDATE = /\bhttps?:\/\/[^\s<>"'`]+/gi;
/** Characters that end a sentence rather than an address. */
const TRAILING = /[.,;:!?…]+$/;

/** The message's text split into plain runs and links, in order; joined, they are the text. */
export function splitLinks(text: string): TextPart[] {
  const parts: TextPart[] = [];
  let plainFrom = 0;
  for (const match of text.matchAll(CANDIDATE)) {
    const address = trimAddress(match[0]);
    const href = safeHref(address);
    if (href === undefined) continue;
    if (match.index > plainFrom) parts.push({ text: text.slice(plainFrom, match.index) });
    parts.push({ text: address, href });
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

/** The normalised address, only when it parses as http(s) with a host. */
function safeHref(address: string): string | undefined {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.hostname === '') return undefined;
  return url.href;
}
