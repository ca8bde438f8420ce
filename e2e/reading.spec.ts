/**
 * What makes a conversation easy to read (issue 21, "Messages people
 * read"): links that open safely, day separators, the "New messages ↓"
 * button, the line of an empty room, and a send-error line that leaves the
 * last message in view.
 */

import type { Message } from '../protocol/protocol.ts';
import { expect, test } from './fixtures.ts';

test.describe('a link in a message', () => {
  test('opens in a new tab with no handle on the chat, and only http(s) is one', async ({
    openChat,
    server,
    room,
  }) => {
    // A page of the chat's own server: no network beyond this machine.
    const address = `${server.url}/time`;
    const text = `see ${address}, not javascript:alert(1) nor data:text/html,<b>x</b> <b>x</b>`;
    await server.send(room, text);
    const ann = await openChat();

    await expect(ann.texts).toHaveText([text]);
    const links = ann.texts.locator('a');
    await expect(links).toHaveCount(1);
    await expect(links).toHaveText(address);
    await expect(links).toHaveAttribute('href', address);
    await expect(links).toHaveAttribute('target', '_blank');
    await expect(links).toHaveAttribute('rel', 'noopener noreferrer');
    await expect(ann.page.locator('#messages b')).toHaveCount(0);

    const [opened] = await Promise.all([ann.page.context().waitForEvent('page'), links.click()]);
    await opened.waitForLoadState();
    expect(opened.url()).toBe(address);
    expect(await opened.evaluate(() => window.opener)).toBeNull();
    expect(await opened.evaluate(() => document.referrer)).toBe('');
  });

  test('is clickable live too, as the page’s own message and in another browser', async ({
    openChat,
  }) => {
    const ann = await openChat();
    const bob = await openChat();
    await expect(bob.status).toHaveText('connected');
    await ann.send('read https://example.com/a_(b). <i>not</i> javascript:void(0)');
    for (const page of [ann, bob]) {
      await expect(page.texts).toHaveText([
        'read https://example.com/a_(b). <i>not</i> javascript:void(0)',
      ]);
      await expect(page.texts.locator('a')).toHaveCount(1);
      await expect(page.texts.locator('a')).toHaveAttribute('href', 'https://example.com/a_(b)');
      await expect(page.page.locator('#messages i')).toHaveCount(0);
    }
  });
});

/** Noon of `days` days ago, in this machine's time zone (the browser's too). */
function noonDaysAgo(days: number): string {
  const date = new Date();
  date.setDate(date.getDate() - days);
  date.setHours(12, 0, 0, 0);
  return date.toISOString();
}

test.describe('day separators', () => {
  test('name each day once, before its first message, also when older pages come on scroll', async ({
    openChat,
    server,
    room,
  }) => {
    const all = Array.from({ length: 60 }, (_, i) => `message ${i + 1}`);
    for (const text of all) await server.send(room, text);
    // The server stamps every message with now; its answers are given older
    // times on their way to the page: 1-10 three days ago, 11-40 yesterday.
    // The page opens in another room first, to be routed before this room loads.
    const page = await openChat({ room: `${room}-other` });
    await page.page.route('**/history?*', async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { messages: Message[] };
      for (const message of body.messages) {
        if (message.id <= 10) message.time = noonDaysAgo(3);
        else if (message.id <= 40) message.time = noonDaysAgo(1);
      }
      await route.fulfill({ response, json: body });
    });
    await page.page.goto(`${server.url}/?room=${room}`);
    const locale = await page.page.evaluate(() => navigator.language);

    const date = new Date(noonDaysAgo(3));
    const threeDaysAgo = new Intl.DateTimeFormat(locale, {
      weekday: 'long',
      day: 'numeric',
      month: 'long',
      ...(date.getFullYear() === new Date().getFullYear() ? {} : { year: 'numeric' }),
    }).format(date);
    await expect(page.texts).toHaveText(all.slice(10));
    await expect(page.days).toHaveText(['Yesterday', 'Today']);
    const firstOfEachDay = page.page.locator('#messages > .day + .message .text');
    await expect(firstOfEachDay).toHaveText(['message 11', 'message 41']);

    // The older page goes above: a new day at the top, and Yesterday still once.
    await page.scrollArea.hover();
    await page.page.mouse.wheel(0, -100_000);
    await expect(page.texts).toHaveText(all);
    await expect(page.days).toHaveText([threeDaysAgo, 'Yesterday', 'Today']);
    await expect(firstOfEachDay).toHaveText(['message 1', 'message 11', 'message 41']);

    // A live message of today joins today.
    await server.send(room, 'live');
    await expect(page.texts.last()).toHaveText('live');
    await expect(page.days).toHaveText([threeDaysAgo, 'Yesterday', 'Today']);
  });
});

test.describe('the "New messages" button', () => {
  test('shows when a message comes while the reader is scrolled up, and takes them down', async ({
    openChat,
    server,
    room,
  }) => {
    for (let i = 1; i <= 30; i += 1) await server.send(room, `message ${i}`);
    const ann = await openChat();
    await expect(ann.texts).toHaveCount(30);
    await expect(ann.texts.last()).toBeInViewport();
    await expect(ann.status).toHaveText('connected');

    // At the bottom, a new message just scrolls into view.
    await server.send(room, 'seen at once');
    await expect(ann.texts.last()).toHaveText('seen at once');
    await expect(ann.texts.last()).toBeInViewport();
    await expect(ann.newMessages).toBeHidden();

    // Scrolled up, reading: the page stays put and says something came.
    await ann.scrollArea.hover();
    await ann.page.mouse.wheel(0, -600);
    await expect(ann.texts.last()).not.toBeInViewport();
    await server.send(room, 'while you read');
    await expect(ann.newMessages).toBeVisible();
    await expect(ann.newMessages).toHaveText('New messages ↓');
    await expect(ann.texts.last()).toHaveText('while you read');
    await expect(ann.texts.last()).not.toBeInViewport();

    await ann.newMessages.click();
    await expect(ann.texts.last()).toBeInViewport();
    await expect(ann.newMessages).toBeHidden();
  });

  test('goes when the reader scrolls down by themselves', async ({ openChat, server, room }) => {
    for (let i = 1; i <= 30; i += 1) await server.send(room, `message ${i}`);
    const ann = await openChat();
    await expect(ann.texts).toHaveCount(30);
    await expect(ann.status).toHaveText('connected');
    await ann.scrollArea.hover();
    await ann.page.mouse.wheel(0, -600);
    await expect(ann.texts.last()).not.toBeInViewport();
    await server.send(room, 'while you read');
    await expect(ann.newMessages).toBeVisible();
    await ann.page.mouse.wheel(0, 100_000);
    await expect(ann.texts.last()).toBeInViewport();
    await expect(ann.newMessages).toBeHidden();
  });
});

test.describe('an empty room', () => {
  test('says so, until the first message', async ({ openChat }) => {
    const ann = await openChat();
    await expect(ann.empty).toHaveText('No messages yet: say hello');
    await expect(ann.empty).toBeVisible();
    await ann.send('hello');
    await expect(ann.texts).toHaveText(['hello']);
    await expect(ann.empty).toBeHidden();
    const bob = await openChat();
    await expect(bob.texts).toHaveText(['hello']);
    await expect(bob.empty).toBeHidden();
  });
});

test.describe('the send-error line', () => {
  test('leaves the last message in full view', async ({ openChat, server, room }) => {
    for (let i = 1; i <= 30; i += 1) await server.send(room, `message ${i}`);
    const ann = await openChat();
    await expect(ann.texts).toHaveCount(30);
    await expect(ann.messages.last()).toBeInViewport({ ratio: 1 });
    await ann.message.press('Enter');
    await expect(ann.sendError).toHaveText('Type a message first.');
    await expect(ann.messages.last()).toBeInViewport({ ratio: 1 });
  });
});
