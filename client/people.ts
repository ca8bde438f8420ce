/**
 * Who is here: the page's side of `people` in the `/recv` answer.
 *
 * The server sends the room's list of nicknames only when it changed since
 * the version the page sent back (`/recv?people=<version>`), so a quiet
 * room's answers stay small (protocol.ts, `RecvAnswer.people`). This module
 * remembers that version, says what to add to each poll's query (the
 * version and the person's nickname), and words the list
 * ("Ann, Bob and 3 more"). No DOM here: the view renders the parts.
 *
 * A server that knows nothing of people never sends the field: the list
 * then stays hidden and the page works as before.
 */
import { limits, type People, type RecvAnswer } from '../protocol/protocol.ts';
import { countCharacters } from './draft.ts';

/** A run of the list's text: a person's nickname, or the words between them. */
export interface PeoplePart {
  text: string;
  person: boolean;
}

const count = new Intl.NumberFormat('en');

/** "Ann", "Ann and Bob", "Ann, Bob and Cy", "Ann, Bob and 3 more", as parts to render. */
export function peopleParts({ names, more }: Pick<People, 'names' | 'more'>): PeoplePart[] {
  const words = (text: string): PeoplePart => ({ text, person: false });
  if (names.length === 0) {
    return more > 0 ? [words(`${count.format(more)} ${more === 1 ? 'person' : 'people'}`)] : [];
  }
  const parts: PeoplePart[] = [];
  const told = distinctNames(names);
  told.forEach((name, index) => {
    if (index > 0) parts.push(words(index === names.length - 1 && more === 0 ? ' and ' : ', '));
    parts.push({ text: name, person: true });
  });
  if (more > 0) parts.push(words(` and ${count.format(more)} more`));
  return parts;
}

/**
 * Two people under one name are told apart: "Cy", "Cy (2)". The server
 * sends the same sorted list to every browser of the room, so each one
 * numbers them alike.
 */
export function distinctNames(names: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return names.map((name) => {
    const nth = (seen.get(name) ?? 0) + 1;
    seen.set(name, nth);
    return nth === 1 ? name : `${name} (${nth})`;
  });
}

/** The whole list as one line of text (its parts joined). */
export function peopleText(people: Pick<People, 'names' | 'more'>): string {
  return peopleParts(people)
    .map((part) => part.text)
    .join('');
}

/** Direction overrides and isolates, and lone surrogates: the server refuses them in a nickname. */
const REFUSED = /[\u202A-\u202E\u2066-\u2069]|[\uD800-\uDFFF]/u;

/**
 * The nickname to send with a poll, or undefined (the server lists the
 * person as Anonymous). Only one the server would accept in a send: a poll
 * refused over a nickname being typed would stop the page's loop.
 */
export function pollNickname(typed: string): string | undefined {
  const nickname = typed.trim().replace(/\s+/g, ' ');
  if (nickname === '' || REFUSED.test(nickname)) return undefined;
  return countCharacters(nickname) <= limits.maxNickname ? nickname : undefined;
}

/** The room's list as this page last heard it, and the version to send back. */
export class PeopleList {
  #people: People | undefined;

  /** The list, once the server has sent one. */
  get people(): People | undefined {
    return this.#people;
  }

  /** Whether the server speaks of people at all (it has sent a list). */
  get known(): boolean {
    return this.#people !== undefined;
  }

  /** Takes an answer's list; returns it when it is news (else undefined: keep showing the last). */
  take(answer: Pick<RecvAnswer, 'people'>): People | undefined {
    const people = answer.people;
    if (people === undefined) return undefined;
    this.#people = people;
    return people;
  }

  /**
   * After a break in polling the server may have restarted and counted
   * versions from the start again: forget ours, so the next answer carries
   * the whole list whatever its version.
   */
  forget(): void {
    this.#people = undefined;
  }

  /** What the next poll adds to its query: `people=<version>` and `nickname=`, each when known. */
  query(typedNickname: string): Record<string, string> {
    const query: Record<string, string> = {};
    if (this.#people !== undefined) query.people = String(this.#people.version);
    const nickname = pollNickname(typedNickname);
    if (nickname !== undefined) query.nickname = nickname;
    return query;
  }
}
