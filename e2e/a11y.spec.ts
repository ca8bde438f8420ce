/**
 * A page everyone can use: axe-core (`@axe-core/playwright`) finds no
 * violation on desktop and phone sizes, in light and dark, with a draft and
 * the notification choices open, with
 * links in both kinds of bubble, while reconnecting (with a "retrying…"
 * bubble) and in the error states; and the keyboard path: focus starts in
 * the message field, a skip link leads to it, Send is off for a bad room.
 */
import AxeBuilder from '@axe-core/playwright';
import type { Browser, BrowserContext, Page } from '@playwright/test';
import type { ChatPage } from './chat-page.ts';
import { expect, type OpenChatOptions, serverDownErrors, test } from './fixtures.ts';

const looks = [
  { name: 'desktop, light', viewport: { width: 1280, height: 800 }, colorScheme: 'light' },
  { name: 'desktop, dark', viewport: { width: 1280, height: 800 }, colorScheme: 'dark' },
  { name: 'phone, light', viewport: { width: 390, height: 844 }, colorScheme: 'light' },
  { name: 'phone, dark', viewport: { width: 390, height: 844 }, colorScheme: 'dark' },
] as const;

type Look = (typeof looks)[number];

/** Every rule axe runs by default, WCAG 2.x A and AA among them. */
async function violations(page: Page): Promise<string[]> {
  const { violations: found } = await new AxeBuilder({ page }).analyze();
  return found.map(
    (violation) =>
      `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join('; ')})`,
  );
}

async function openIn(
  browser: Browser,
  look: Look,
  openChat: (options?: OpenChatOptions) => Promise<ChatPage>,
  contexts: BrowserContext[],
  options: OpenChatOptions = {},
): Promise<ChatPage> {
  const context = await browser.newContext({
    viewport: look.viewport,
    colorScheme: look.colorScheme,
  });
  contexts.push(context);
  return openChat({ ...options, context });
}

test.describe('a page everyone can use', () => {
  const contexts: BrowserContext[] = [];
  test.afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
  });

  for (const look of looks) {
    test(`no axe violation with messages, links and a draft: ${look.name}`, async ({
      browser,
      openChat,
      server,
      room,
    }) => {
      await server.send(room, 'Read https://example.com/other first', 'Bob');
      const ann = await openIn(browser, look, openChat, contexts);
      await ann.nickname.fill('Ann');
      await ann.send('Mine links to https://example.com/mine too');
      await expect(ann.texts).toHaveCount(2);
      await expect(ann.messages.locator('a')).toHaveCount(2);
      // The notification choices open, so their controls are checked too.
      await ann.page.getByText('Notifications', { exact: true }).click();
      await expect(ann.page.getByLabel('Desktop notifications')).toBeVisible();
      await ann.message.fill('a draft not sent yet');
      await expect(ann.status).toHaveText('connected');
      expect(await violations(ann.page)).toEqual([]);
    });

    test(`no axe violation when the room is refused and a send is refused: ${look.name}`, async ({
      browser,
      openChat,
    }) => {
      const bad = await openIn(browser, look, openChat, contexts, { room: 'Not A Room' });
      await expect(bad.status).not.toHaveText('connecting…');
      expect(await violations(bad.page)).toEqual([]);

      const ann = await openIn(browser, look, openChat, contexts);
      await expect(ann.status).toHaveText('connected');
      await ann.send('x'.repeat(2_001));
      await expect(ann.sendError).toBeVisible();
      expect(await violations(ann.page)).toEqual([]);
    });
  }

  test('no axe violation while reconnecting, with a "retrying…" bubble, in every look', async ({
    browser,
    openChat,
    server,
    allowConsoleErrors,
  }) => {
    allowConsoleErrors(...serverDownErrors);
    const pages: ChatPage[] = [];
    for (const look of looks) pages.push(await openIn(browser, look, openChat, contexts));
    for (const chat of pages) await expect(chat.status).toHaveText('connected');
    await server.stop();
    for (const chat of pages) {
      await expect(chat.page.locator('#outage')).toBeVisible();
      await chat.send('sent while the server is down');
      await expect(chat.pending.locator('time')).toHaveText('retrying…');
    }
    for (const [index, chat] of pages.entries()) {
      expect(await violations(chat.page), looks[index]!.name).toEqual([]);
    }
  });
});

test.describe('the keyboard path', () => {
  test('focus starts in the message field, and a skip link leads to it', async ({ openChat }) => {
    const ann = await openChat();
    await expect(ann.message).toBeFocused();
    // The first stop of the Tab order: nothing focusable comes before it.
    const first = await ann.page.evaluate(
      () => document.querySelector('a[href], button, input, textarea, select, [tabindex]')?.id,
    );
    expect(first).toBe('skip');
    const skip = ann.page.getByRole('link', { name: 'Skip to the message field' });
    await skip.focus();
    await expect(skip).toBeFocused();
    // Out of sight until focused, then on screen.
    const box = await skip.boundingBox();
    expect(box && box.y >= 0).toBe(true);
    await ann.page.keyboard.press('Enter');
    await expect(ann.message).toBeFocused();
  });

  test('Send is off while the room name is one the server would refuse', async ({ openChat }) => {
    const bad = await openChat({ room: 'Not A Room' });
    await expect(bad.page.getByRole('button', { name: 'Send' })).toBeDisabled();
    const good = await openChat();
    await expect(good.page.getByRole('button', { name: 'Send' })).toBeEnabled();
  });
});
