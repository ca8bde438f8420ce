/**
 * What the composer says about a draft before it is sent: its length against
 * the contract's limit, and why a send would be refused. Pure functions, so
 * the rules are tested without a page (`draft.test.ts`).
 *
 * The page never cuts what someone wrote: no `maxlength` on the fields (it
 * truncates a paste silently, mid-word). A draft over the limit stays as
 * typed, the counter shows by how much, and sending is refused with the
 * reason until it is shortened. Lengths are counted as the server counts
 * them (docs/design.md, "Limits"): code points, after trimming.
 */
import { limits } from '../protocol/protocol.ts';

/** The counter shows from this many characters: close enough to the limit to matter. */
export const COUNTER_FROM = Math.floor(limits.maxText * 0.9);

/** Characters as a person (and the server) counts them: code points, not UTF-16 units. */
export function countCharacters(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

export interface DraftState {
  /** Characters of the message text, trimmed. */
  length: number;
  /** The counter's text, or undefined while the draft is far from the limit. */
  counter: string | undefined;
  /** Over the limit: the counter is shown as a problem. */
  over: boolean;
}

const number = new Intl.NumberFormat('en');

/** The counter for the message field, updated on every input. */
export function draftState(text: string): DraftState {
  const length = countCharacters(text.trim());
  const over = length > limits.maxText;
  if (length < COUNTER_FROM) return { length, counter: undefined, over };
  const base = `${number.format(length)} / ${number.format(limits.maxText)}`;
  const excess = length - limits.maxText;
  return { length, counter: over ? `${base}: ${number.format(excess)} too many` : base, over };
}

/**
 * Why this draft cannot be sent, in words for the person who typed it, or
 * undefined when it can. The same rules as the server's validation, checked
 * first so that nothing is posted only to be refused.
 */
export function refusal(text: string, nickname: string): string | undefined {
  const length = countCharacters(text.trim());
  if (length === 0) {
    return text === ''
      ? 'Type a message first.'
      : 'A message of only spaces or blank lines is not sent: type some text.';
  }
  if (length > limits.maxText) {
    return `This message is ${number.format(length)} characters long; the limit is ${number.format(limits.maxText)}. Shorten it by ${number.format(length - limits.maxText)} to send it.`;
  }
  const nicknameLength = countCharacters(nickname.trim());
  if (nicknameLength > limits.maxNickname) {
    return `The nickname is ${number.format(nicknameLength)} characters long; the limit is ${limits.maxNickname}. Shorten it to send.`;
  }
  return undefined;
}
