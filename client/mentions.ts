/**
 * `@name` in a message: found as plain runs of text (never HTML), so the
 * view can mark the person's own name and say the message mentions them.
 * A mention is `@` and the nickname, in any case, not inside a word
 * ("mail@Ann" is not one) and not running on into one ("@Annabel" is not
 * Ann's).
 */

/** A run of text: plain, or a mention of the reader. */
export interface MentionPart {
  text: string;
  mention: boolean;
}

const WORD = /[\p{L}\p{N}_]/u;

/** Where `@nickname` starts in `text`, each time it stands as a mention. */
function mentionStarts(text: string, nickname: string): number[] {
  const name = nickname.trim();
  if (name === '') return [];
  const haystack = text.toLocaleLowerCase();
  const needle = `@${name.toLocaleLowerCase()}`;
  const starts: number[] = [];
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) {
    const before = at === 0 ? '' : text[at - 1]!;
    const after = text[at + needle.length] ?? '';
    if (WORD.test(before) || WORD.test(after)) continue;
    starts.push(at);
  }
  return starts;
}

/** Whether `text` mentions `nickname` (`@Ann`). */
export function mentions(text: string, nickname: string): boolean {
  return mentionStarts(text, nickname).length > 0;
}

/** The text split into plain runs and mentions of `nickname`; joined, they are the text. */
export function mentionParts(text: string, nickname: string): MentionPart[] {
  const length = nickname.trim().length + 1;
  const parts: MentionPart[] = [];
  let from = 0;
  for (const at of mentionStarts(text, nickname)) {
    if (at > from) parts.push({ text: text.slice(from, at), mention: false });
    parts.push({ text: text.slice(at, at + length), mention: true });
    from = at + length;
  }
  if (from < text.length) parts.push({ text: text.slice(from), mention: false });
  return parts;
}
