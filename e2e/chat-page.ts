/** One chat tab, seen as a user sees it: labelled fields, visible messages, the header. */
import type { Locator, Page } from '@playwright/test';

export class ChatPage {
  readonly nickname: Locator;
  readonly message: Locator;
  /** Messages the server has, in the order shown. */
  readonly messages: Locator;
  readonly texts: Locator;
  readonly nicknames: Locator;
  /** Messages typed here and not yet acknowledged. */
  readonly pending: Locator;
  readonly status: Locator;
  readonly online: Locator;
  readonly room: Locator;
  readonly sendError: Locator;
  /** The part of the page that scrolls: messages, older-page line, pending sends. */
  readonly scrollArea: Locator;
  /** The live region screen readers announce new messages from. */
  readonly log: Locator;
  /** The message field's counter near the length limit. */
  readonly counter: Locator;
  /** A quiet line over the messages, e.g. after the room was reset. */
  readonly notice: Locator;
  /** "No messages yet: say hello", in a room shown empty. */
  readonly empty: Locator;
  /** The day separators of the message list ("Today", "Yesterday", a date). */
  readonly days: Locator;
  /** The "New messages ↓" button, shown when messages come while the reader is scrolled up. */
  readonly newMessages: Locator;
  /** Who is here: the line of nicknames, each a `.person`. */
  readonly people: Locator;
  /** "Ann is typing…". */
  readonly typing: Locator;

  constructor(readonly page: Page) {
    this.nickname = page.getByLabel('Nickname', { exact: true });
    this.message = page.getByLabel('Message', { exact: true });
    this.messages = page.locator('#messages > .message');
    this.texts = this.messages.locator('.text');
    this.nicknames = this.messages.locator('.nickname');
    this.pending = page.locator('#pending > .message');
    this.status = page.getByRole('status');
    this.online = page.locator('#online');
    this.room = page.locator('#room');
    this.sendError = page.getByRole('alert');
    this.scrollArea = page.getByRole('main', { name: 'Conversation' });
    this.log = page.getByRole('log', { name: 'Messages' });
    this.counter = page.locator('#counter');
    this.notice = page.locator('#notice');
    this.empty = page.locator('#empty');
    this.days = page.locator('#messages > .day');
    this.newMessages = page.getByRole('button', { name: 'New messages' });
    this.people = page.locator('#people');
    this.typing = page.locator('#typing');
  }

  /** Types a message and presses Enter, as a user does. */
  async send(text: string): Promise<void> {
    await this.message.fill(text);
    await this.message.press('Enter');
  }
}
