/**
 * The DOM of the chat page, through jQuery. Everything a user typed is put
 * in with `.text()` or `.val()`, never `.html()`: a message such as
 * `<img onerror=…>` shows as those characters and runs nothing.
 *
 * Messages are kept in id order and each id shows once, whichever way it
 * came (the first page, an older page, a poll, or the answer to our own
 * send). The list is a live region (`role="log"`, polite) in index.html, so
 * screen readers announce new messages without interrupting.
 */
import $ from 'jquery/slim';
import type { ApiError, Message } from './api.ts';
import type { DraftState } from './draft.ts';
import type { ConnectionStatus } from './poll.ts';
import type { PendingSend } from './sender.ts';

/** How close to the bottom (px) still counts as "reading the latest": new messages scroll into view. */
const STICKY_BOTTOM_PX = 48;

const statusLabels: Record<ConnectionStatus, string> = {
  connecting: 'connecting…',
  connected: 'connected',
  reconnecting: 'reconnecting…',
  stopped: 'disconnected',
};

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dateTimeFormat = new Intl.DateTimeFormat(undefined, {
  dateStyle: 'medium',
  timeStyle: 'medium',
});

export interface ChatViewOptions {
  /** Whether a message was sent from this browser (styled as ours). */
  isMine(message: Message): boolean;
}

export class ChatView {
  /** The scrolling part of the page: messages, the older-page line, pending sends. */
  readonly scrollArea = $('#scroll-area');
  readonly #messages = $('#messages');
  readonly #pending = $('#pending');
  readonly #older = $('#older');
  readonly #notice = $('#notice');
  /** Each shown message's element, by id: a lookup, not a query over the list. */
  readonly #items = new Map<number, HTMLElement>();
  #online: number | undefined;
  readonly #isMine: (message: Message) => boolean;

  constructor({ isMine }: ChatViewOptions) {
    this.#isMine = isMine;
  }

  showRoom(room: string): void {
    $('#room').text(`#${room}`);
    document.title = `#${room} · Long-Poll Chat`;
  }

  showStatus(status: ConnectionStatus, error?: ApiError): void {
    const label = status === 'stopped' && error ? error.message : statusLabels[status];
    $('#status')
      .attr('data-status', status)
      .attr('title', error?.message ?? '')
      .text(label);
  }

  /** Rewritten only when the count changes: every poll answer carries it, and a live region must not repeat itself. */
  showOnline(count: number): void {
    if (count === this.#online) return;
    this.#online = count;
    $('#online').text(`${count} online`);
  }

  /** Id of the oldest message shown, if any: where the next older page ends. */
  oldestId(): number | undefined {
    const first = this.#messages[0]!.firstElementChild as HTMLElement | null;
    return first ? Number(first.dataset.id) : undefined;
  }

  /** Newest messages: appended in id order; the view follows them if the reader was at the bottom. */
  addMessages(messages: readonly Message[]): void {
    const follow = this.#atBottom();
    for (const message of messages) this.#insert(message);
    if (follow) this.scrollToBottom();
  }

  /** An older page, put above without moving what the reader is looking at. */
  addOlder(messages: readonly Message[]): void {
    const el = this.scrollArea[0]!;
    const fromBottom = el.scrollHeight - el.scrollTop;
    // Newest first: each goes straight before the current first message.
    for (const message of [...messages].reverse()) this.#insert(message);
    el.scrollTop = el.scrollHeight - fromBottom;
  }

  /** A message this page sent, now stored: styled as ours if it already shows. */
  markMine(id: number): void {
    if (this.#items.has(id)) $(this.#items.get(id)!).addClass('mine');
  }

  /**
   * The room was reset on the server: every message shown is void. Empties
   * the list (pending sends stay: they are still on their way) and says so,
   * quietly, until the next message arrives.
   */
  clearMessages(): void {
    this.#messages.empty();
    this.#items.clear();
    this.showOlder('idle');
    this.#notice
      .text('This room was reset on the server; it starts again below.')
      .prop('hidden', false);
  }

  showOlder(state: 'loading' | 'error' | 'start' | 'idle'): void {
    const text = {
      loading: 'Loading older messages…',
      error: 'Could not load older messages; scroll up to try again.',
      start: 'This is the start of the room.',
      idle: '',
    }[state];
    this.#older.text(text).prop('hidden', text === '');
  }

  /** Whether the scroll area cannot scroll yet (too few messages to fill it). */
  fitsWithoutScrolling(): boolean {
    const el = this.scrollArea[0]!;
    return el.scrollHeight <= el.clientHeight;
  }

  scrollToBottom(): void {
    const el = this.scrollArea[0]!;
    el.scrollTop = el.scrollHeight;
  }

  addPending({ key, nickname, text }: PendingSend): void {
    const item = messageItem(nickname || 'Anonymous', text)
      .addClass('mine is-pending')
      .attr('data-key', key);
    item.find('time').text('sending…');
    this.#pending.append(item);
    this.scrollToBottom();
  }

  retryingPending(key: string, error: ApiError): void {
    this.#pendingItem(key).find('time').text('retrying…').attr('title', error.message);
  }

  removePending(key: string): void {
    this.#pendingItem(key).remove();
  }

  showSendError(message: string | undefined): void {
    $('#send-error')
      .text(message ?? '')
      .prop('hidden', message === undefined);
  }

  /** The message field's counter near the limit, and its overflow past it (draft.ts). */
  showDraft({ counter, over }: DraftState): void {
    $('#counter')
      .text(counter ?? '')
      .prop('hidden', counter === undefined)
      .toggleClass('over', over);
    $('#message').attr('aria-invalid', over ? 'true' : 'false');
    $('#composer .send').attr('aria-disabled', over ? 'true' : 'false');
  }

  #insert(message: Message): void {
    if (this.#items.has(message.id)) return;
    this.#notice.prop('hidden', true);
    const item = messageItem(message.nickname, message.text, message.time).attr(
      'data-id',
      message.id,
    );
    if (this.#isMine(message)) item.addClass('mine');
    const element = item[0]!;
    this.#items.set(message.id, element);
    const list = this.#messages[0]!;
    // From the newest backwards: a live message lands after the last one at
    // once, and an older page's messages go before the first one at once.
    // Only a message that arrives out of order walks further.
    const first = list.firstElementChild as HTMLElement | null;
    if (first && message.id < Number(first.dataset.id)) {
      first.before(element);
      return;
    }
    let after = list.lastElementChild as HTMLElement | null;
    while (after && Number(after.dataset.id) > message.id) {
      after = after.previousElementSibling as HTMLElement | null;
    }
    if (after) after.after(element);
    else list.prepend(element);
  }

  #pendingItem(key: string): JQuery {
    // Keys are [A-Za-z0-9_-] (ids.ts), safe in a selector.
    return this.#pending.children(`[data-key="${key}"]`);
  }

  #atBottom(): boolean {
    const el = this.scrollArea[0]!;
    return el.scrollHeight - el.scrollTop - el.clientHeight < STICKY_BOTTOM_PX;
  }
}

function messageItem(nickname: string, text: string, time?: string): JQuery {
  const stamp = $('<time>');
  if (time !== undefined) {
    const date = new Date(time);
    stamp
      .attr({ datetime: time, title: dateTimeFormat.format(date) })
      .text(timeFormat.format(date));
  }
  return $('<li class="message">').append(
    $('<div class="meta">').append($('<span class="nickname">').text(nickname), stamp),
    $('<p class="text">').text(text),
  );
}
