/**
 * The list of messages in the DOM: each id once, in id order, with a day
 * separator ("Today", "Yesterday", a date: dates.ts) before the first
 * message of each day, whichever way a message came (the first page, an
 * older page prepended on scroll, a poll, the answer to our own send).
 *
 * A separator always sits right before the first message of its day, so a
 * message put in place only ever needs the separators next to it fixed: no
 * pass over the whole list, and no separator removed and added again while
 * an older page is prepended (the list is a live region: each node added is
 * announced).
 */
import type { Message } from './api.ts';
import { dayKey, dayLabel } from './dates.ts';

const isMessage = (el: Element | null): el is HTMLElement =>
  el instanceof HTMLElement && el.classList.contains('message');
const isSeparator = (el: Element | null): el is HTMLElement =>
  el instanceof HTMLElement && el.classList.contains('day');
const idOf = (el: HTMLElement) => Number(el.dataset.id);

export class MessageList {
  /** Each shown message's element, by id: a lookup, not a query over the list. */
  readonly #items = new Map<number, HTMLElement>();
  /** The day the separators' words were written on: "Today" is yesterday after midnight. */
  #labelledOn = dayKey(new Date());
  readonly #list: HTMLElement;

  constructor(list: HTMLElement) {
    this.#list = list;
  }

  get size(): number {
    return this.#items.size;
  }

  get(id: number): HTMLElement | undefined {
    return this.#items.get(id);
  }

  /** Id of the oldest message shown, if any. */
  oldestId(): number | undefined {
    const first = this.#firstMessage();
    return first ? idOf(first) : undefined;
  }

  clear(): void {
    this.#list.replaceChildren();
    this.#items.clear();
  }

  /** Puts a message's element in place; false when that id already shows. */
  insert(message: Message, element: HTMLElement): boolean {
    if (this.#items.has(message.id)) return false;
    this.relabel();
    const day = dayKey(new Date(message.time));
    element.dataset.id = String(message.id);
    element.dataset.day = day;
    this.#items.set(message.id, element);
    const before = this.#messageBefore(message.id);
    const after = before ? this.#nextMessage(before) : this.#firstMessage();
    this.#place(element, before, day);
    if (after) this.#fixSeparatorOf(after, element);
    return true;
  }

  /** Rewrites the separators' words when the day has changed since they were written. */
  relabel(): void {
    const today = dayKey(new Date());
    if (today === this.#labelledOn) return;
    this.#labelledOn = today;
    for (const separator of this.#list.querySelectorAll<HTMLElement>(':scope > .day')) {
      separator.querySelector('time')!.textContent = labelOf(separator.dataset.day!);
    }
  }

  /** Right after `before` (or first), with a separator of its own unless its day goes on. */
  #place(element: HTMLElement, before: HTMLElement | undefined, day: string): void {
    if (before?.dataset.day === day) {
      before.after(element);
      return;
    }
    // A new day starts here, unless the next message's separator is already for this day.
    const next = before ? before.nextElementSibling : this.#list.firstElementChild;
    if (isSeparator(next) && next.dataset.day === day) {
      next.after(element);
      return;
    }
    if (before) before.after(element);
    else this.#list.prepend(element);
    element.before(separator(day));
  }

  /** The message after the new one needs a separator only if its day differs. */
  #fixSeparatorOf(after: HTMLElement, placed: HTMLElement): void {
    const between = placed.nextElementSibling;
    if (after.dataset.day === placed.dataset.day) {
      if (between !== after) between?.remove();
    } else if (between === after) {
      after.before(separator(after.dataset.day!));
    }
  }

  /** The shown message with the largest id below `id`: from the newest back (live messages). */
  #messageBefore(id: number): HTMLElement | undefined {
    const first = this.#firstMessage();
    if (!first || id < idOf(first)) return undefined;
    let candidate = this.#lastMessage();
    while (candidate && idOf(candidate) > id) candidate = this.#previousMessage(candidate);
    return candidate;
  }

  #firstMessage(): HTMLElement | undefined {
    const first = this.#list.firstElementChild;
    return isMessage(first) ? first : first ? this.#nextMessage(first) : undefined;
  }

  #lastMessage(): HTMLElement | undefined {
    const last = this.#list.lastElementChild;
    return isMessage(last) ? last : last ? this.#previousMessage(last) : undefined;
  }

  #nextMessage(el: Element): HTMLElement | undefined {
    let next = el.nextElementSibling;
    while (next && !isMessage(next)) next = next.nextElementSibling;
    return isMessage(next) ? next : undefined;
  }

  #previousMessage(el: Element): HTMLElement | undefined {
    let previous = el.previousElementSibling;
    while (previous && !isMessage(previous)) previous = previous.previousElementSibling;
    return isMessage(previous) ? previous : undefined;
  }
}

function labelOf(day: string): string {
  const [year, month, date] = day.split('-').map(Number);
  return dayLabel(new Date(year!, month! - 1, date!, 12), new Date());
}

function separator(day: string): HTMLElement {
  const item = document.createElement('li');
  item.className = 'day';
  item.dataset.day = day;
  const time = document.createElement('time');
  time.dateTime = day;
  time.textContent = labelOf(day);
  item.append(time);
  return item;
}
