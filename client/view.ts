/**
 * The DOM of the chat page, through jQuery. Everything a user typed is put
 * in with `.text()` or `.val()`, never `.html()`: a message such as
 * `<img onerror=…>` shows as those characters and runs nothing.
 *
 * Messages are kept in id order and each id shows once, whichever way it
 * came (the first page, an older page, a poll, or the answer to our own send).
 */
import $ from 'jquery';
import type { ApiError, Message } from './api.ts';
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

export class ChatView {
  readonly log = $('#log');
  readonly #messages = $('#messages');
  readonly #pending = $('#pending');
  readonly #older = $('#older');
  readonly #shown = new Set<number>();
  readonly #mine = new Set<number>();

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

  showOnline(count: number): void {
    $('#online').text(`${count} online`);
  }

  /** Id of the oldest message shown, if any: where the next older page ends. */
  oldestId(): number | undefined {
    const id = this.#messages.children().first().attr('data-id');
    return id === undefined ? undefined : Number(id);
  }

  /** Newest messages: appended in id order; the view follows them if the reader was at the bottom. */
  addMessages(messages: readonly Message[]): void {
    const follow = this.#atBottom();
    for (const message of messages) this.#insert(message);
    if (follow) this.scrollToBottom();
  }

  /** An older page, put above without moving what the reader is looking at. */
  addOlder(messages: readonly Message[]): void {
    const el = this.log[0]!;
    const fromBottom = el.scrollHeight - el.scrollTop;
    // Newest first: each goes straight before the current first message.
    for (const message of [...messages].reverse()) this.#insert(message);
    el.scrollTop = el.scrollHeight - fromBottom;
  }

  /** A message this tab sent: styled as ours. */
  markMine(id: number): void {
    this.#mine.add(id);
    this.#item(id).addClass('mine');
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

  /** Whether the log cannot scroll yet (too few messages to fill it). */
  fitsWithoutScrolling(): boolean {
    const el = this.log[0]!;
    return el.scrollHeight <= el.clientHeight;
  }

  scrollToBottom(): void {
    const el = this.log[0]!;
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

  #insert(message: Message): void {
    if (this.#shown.has(message.id)) return;
    this.#shown.add(message.id);
    const item = messageItem(message.nickname, message.text, message.time).attr(
      'data-id',
      message.id,
    );
    if (this.#mine.has(message.id)) item.addClass('mine');
    const items = this.#messages.children();
    // An older page: before the first, no walk through a long log.
    if (items.length > 0 && message.id < Number(items[0]!.dataset.id)) {
      item.insertBefore(items[0]!);
      return;
    }
    // Usually the newest: a walk from the end finds its place in one step.
    for (let i = items.length - 1; i >= 0; i -= 1) {
      if (Number(items[i]!.dataset.id) < message.id) {
        item.insertAfter(items[i]!);
        return;
      }
    }
    this.#messages.prepend(item);
  }

  #item(id: number): JQuery {
    return this.#messages.children(`[data-id="${id}"]`);
  }

  #pendingItem(key: string): JQuery {
    // Keys are [A-Za-z0-9_-] (ids.ts), safe in a selector.
    return this.#pending.children(`[data-key="${key}"]`);
  }

  #atBottom(): boolean {
    const el = this.log[0]!;
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
