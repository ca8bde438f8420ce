/**
 * A database reset under an open tab: the tab's cursor is ahead of every id
 * the new database will give for a while. The server says so in its `/recv`
 * answer (`reset: true`) and the page reloads the room.
 *
 * This test runs its own chat server on a fresh SQLite file whatever
 * `DATABASE_URL` says: what it does is delete that file.
 */
import { ChatPage } from './chat-page.ts';
import { ChatServer } from './chat-server.ts';
import { expect, serverDownErrors, test } from './fixtures.ts';

test.describe('when the database is deleted under an open tab', () => {
  test('the tab reloads the room and shows the messages sent since, each once', async ({
    browser,
    room,
  }) => {
    const server = await ChatServer.start('fresh-sqlite');
    const context = await browser.newContext();
    const problems: string[] = [];
    try {
      const page = await context.newPage();
      page.on('console', (message) => {
        const text = message.text();
        if (message.type() === 'error' && !serverDownErrors.some((p) => p.test(text))) {
          problems.push(text);
        }
      });
      page.on('pageerror', (error) => problems.push(error.message));
      await page.goto(`${server.url}/?room=${room}`);
      const ann = new ChatPage(page);
      const before = ['one', 'two', 'three', 'four', 'five'];
      for (const text of before) await ann.send(text);
      await expect(ann.texts).toHaveText(before);

      await server.stop();
      server.deleteDatabase();
      await server.start();
      const after = ['new one', 'new two', 'new three'];
      for (const text of after) await server.send(room, text);

      await expect(ann.texts).toHaveText(after);
      await expect(ann.status).toHaveText('connected');
      await expect(ann.notice).toHaveText(/reset/);
      // It polls on from the new head: the next message shows once.
      await server.send(room, 'new four');
      await expect(ann.texts).toHaveText([...after, 'new four']);
      await expect(ann.notice).toBeHidden();
      // Old "mine" marks do not stick to new messages that reuse their ids.
      await expect(ann.page.locator('#messages > .message.mine')).toHaveCount(0);
      expect(problems, 'console and page errors').toEqual([]);
    } finally {
      await context.close();
      await server.close();
    }
  });
});
