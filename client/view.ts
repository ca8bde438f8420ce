/**
 * The DOM of the chat page, through jQuery. Everything a user typed is put
 * in with `.text()`, `.val()` or `textContent`, never `.html()`: a message
 * such as `<img onerror=…>` shows as those characters and runs nothing. The
 * links of a message (links.ts) are `<a>` nodes built one by one, their
 * address set as a property and their words as text.
 *
 * Messages are kept in id order and each id shows once, with a separator
 * for each day (message-list.ts). The list is a live region (`role="log"`,
 * polite) in index.html, so screen readers announce new messages without
 * interrupting.
 */
import $ from 'jquery/slim';
import type { People } from '../protocol/protocol.ts';
import type { ApiError, Message } from './api.ts';
import type { DraftState } from './draft.ts';
import { splitLinks } from './links.ts';
import { mentionParts, mentions } from './mentions.ts';
import { MessageList } from './message-list.ts';
import { peopleParts, peopleText } from './people.ts';
import type { ConnectionStatus } from './poll.ts';
import type { PendingSend } from './sender.ts';
import { errorInWords } from './words.ts';

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
  /** The reader's nickname as typed now: `@` it in someone else's message is marked. */
  nickname?(): string;
}

export class ChatView {
  /** The scrolling part of the page: messages, the older-page line, pending sends. */
  readonly scrollArea = $('#scroll-area');
  readonly #messages = $('#messages');
  readonly #pending = $('#pending');
  readonly #older = $('#older');
  readonly #notice = $('#notice');
  readonly #empty = $('#empty');
  readonly #newMessages = $('#new-messages');
  readonly #list = new MessageList(this.#messages[0]!);
  #online: number | undefined;
  /** Whether the latest page has been shown: before it, an empty list says nothing. */
  #loaded = false;
  /** Whether the reader was at the bottom at their last scroll: kept there when the area shrinks. */
  #stuck = true;
  readonly #isMine: (message: Message) => boolean;
  readonly #nickname: () => string;

  constructor({ isMine, nickname }: ChatViewOptions) {
    this.#isMine = isMine;
    this.#nickname = nickname ?? (() => '');
    const area = this.scrollArea[0]!;
    this.scrollArea.on('scroll', () => {
      this.#stuck = this.#atBottom();
      if (this.#stuck) this.#newMessages.prop('hidden', true);
    });
    this.#newMessages.on('click', () => this.scrollToBottom());
    // The composer grows (the send-error line, a longer draft) and the area
    // shrinks: without this, its last lines would slip under the composer.
    new ResizeObserver(() => {
      if (this.#stuck) area.scrollTop = area.scrollHeight;
    }).observe(area);
    // "Today" becomes "Yesterday" at midnight, message or not.
    setInterval(() => this.#list.relabel(), 60_000);
  }

  showRoom(room: string): void {
    $('#room').text(`#${room}`);
    document.title = `#${room} · Long-Poll Chat`;
  }

  showStatus(status: ConnectionStatus, error?: ApiError): void {
    const label = status === 'stopped' && error ? errorInWords(error) : statusLabels[status];
    $('#status')
      .attr('data-status', status)
      .attr('title', error ? errorInWords(error) : '')
      .text(label);
    // In words while the page cannot reach the server; an overlay, so nothing moves.
    $('#outage').prop('hidden', status !== 'reconnecting');
  }

  /**
   * Rewritten only when the count changes: every poll answer carries it, and
   * a live region must not repeat itself. A fresh count also ends the stale
   * state of `showPresenceStale`.
   */
  showOnline(count: number): void {
    $('#online').prop('hidden', false).removeClass('stale');
    if (count === this.#online) return;
    this.#online = count;
    $('#online').text(`${count} online`);
  }

  /**
   * Who is here (people.ts): each nickname a `.person` element, as text.
   * Hidden while the server has sent no list (a server that knows nothing of
   * people), so the page shows what it did before.
   */
  showPeople(people: People): void {
    const parts = peopleParts(people).map(({ text, person }) =>
      person ? $('<span class="person">').text(text)[0]! : document.createTextNode(text),
    );
    $('#people-names').empty().append(parts);
    // The line is cut to fit; the whole list shows on hover.
    $('#people')
      .attr('title', peopleText(people))
      .removeClass('stale')
      .prop('hidden', parts.length === 0);
  }

  /**
   * The page lost the server (reconnecting, or stopped): the count and the
   * list are from before, and may be wrong. Hidden until an answer brings
   * them again, keeping their place: nothing below them moves.
   */
  showPresenceStale(): void {
    $('#online, #people').addClass('stale');
  }

  /** "Ann is typing…" (typing.ts), or nothing. The line keeps its height: nothing jumps. */
  showTyping(text: string): void {
    $('#typing').text(text);
  }

  /** Id of the oldest message shown, if any: where the next older page ends. */
  oldestId(): number | undefined {
    return this.#list.oldestId();
  }

  /**
   * Newest messages: put in id order; the view follows them if the reader
   * was at the bottom, else a "New messages ↓" button says they came.
   */
  addMessages(messages: readonly Message[]): void {
    const follow = this.#atBottom();
    let added = 0;
    for (const message of messages) if (this.#insert(message)) added += 1;
    this.#loaded = true;
    this.#showEmpty();
    if (follow) this.scrollToBottom();
    else if (added > 0) this.#newMessages.prop('hidden', false);
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
    this.#list.get(id)?.classList.add('mine');
  }

  /**
   * The room was reset on the server: every message shown is void. Empties
   * the list (pending sends stay: they are still on their way) and says so,
   * quietly, until the next message arrives.
   */
  clearMessages(): void {
    this.#list.clear();
    this.#loaded = false;
    this.#showEmpty();
    this.#newMessages.prop('hidden', true);
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
    this.#stuck = true;
    this.#newMessages.prop('hidden', true);
  }

  /**
   * The room cannot be opened (a bad name, or another refusal a retry cannot
   * fix): the reason in the conversation, where the reader looks, and a room
   * to go to instead when there is an obvious one.
   */
  showRoomRefused(reason: string, instead?: string): void {
    this.#notice.empty().text(reason).prop('hidden', false);
    if (instead === undefined) return;
    const link = $('<a>')
      .attr('href', `?room=${encodeURIComponent(instead)}`)
      .text(`#${instead}`);
    this.#notice.append(' Open ', link, ' instead.');
  }

  addPending({ key, nickname, text }: PendingSend): void {
    const item = messageItem(nickname || 'Anonymous', text)
      .addClass('mine is-pending')
      .attr('data-key', key);
    item.find('time').text('sending…');
    this.#pending.append(item);
    this.#showEmpty();
    this.scrollToBottom();
  }

  retryingPending(key: string, error: ApiError): void {
    this.#pendingItem(key).find('time').text('retrying…').attr('title', error.message);
  }

  removePending(key: string): void {
    this.#pendingItem(key).remove();
    this.#showEmpty();
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

  /** Puts a message in place; false when it already shows. */
  #insert(message: Message): boolean {
    if (this.#list.get(message.id)) return false;
    this.#notice.prop('hidden', true);
    const mine = this.#isMine(message);
    const reader = mine ? '' : this.#nickname();
    const item = messageItem(message.nickname, message.text, message.time, reader);
    if (mine) item.addClass('mine');
    else if (mentions(message.text, reader)) {
      // Said in words too, not by colour alone.
      item.addClass('mentions-me');
      item.find('.meta').append($('<span class="mention-badge">').text('mentions you'));
    }
    return this.#list.insert(message, item[0]!);
  }

  /** "No messages yet: say hello" in a room shown empty, with nothing on its way either. */
  #showEmpty(): void {
    const empty = this.#loaded && this.#list.size === 0 && this.#pending.children().length === 0;
    this.#empty.prop('hidden', !empty);
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

function messageItem(nickname: string, text: string, time?: string, reader = ''): JQuery {
  const stamp = $('<time>');
  if (time !== undefined) {
    const date = new Date(time);
    stamp
      .attr({ datetime: time, title: dateTimeFormat.format(date) })
      .text(timeFormat.format(date));
  }
  return $('<li class="message">').append(
    $('<div class="meta">').append($('<span class="nickname">').text(nickname), stamp),
    $('<p class="text">').append(linkedText(text, reader)),
  );
}

/**
 * The text as DOM nodes: plain runs as text nodes, each http(s) address an
 * `<a>` that opens in a new tab without a handle on this page (`noopener`)
 * and without telling the site where the reader came from (`noreferrer`).
 */
function linkedText(text: string, reader: string): (Text | HTMLElement)[] {
  return splitLinks(text).flatMap((part): (Text | HTMLElement)[] => {
    if (!('href' in part)) {
      // `@reader` in a plain run is marked, as text in a <mark>.
      return mentionParts(part.text, reader).map(({ text: run, mention }) => {
        if (!mention) return document.createTextNode(run);
        const mark = document.createElement('mark');
        mark.className = 'mention';
        mark.textContent = run;
        return mark;
      });
    }
    const link = document.createElement('a');
    link.href = part.href;
    link.rel = 'noopener noreferrer';
    link.target = '_blank';
    link.textContent = part.text;
    return [link];
  });
}
