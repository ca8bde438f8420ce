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
  readonly log: Locator;

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
    this.log = page.getByRole('main', { name: 'Messages' });
  }

  /** Types a message and presses Enter, as a user does. */
  async send(text: string): Promise<void> {
    await this.message.fill(text);
    await this.message.press('Enter');
  }
}
