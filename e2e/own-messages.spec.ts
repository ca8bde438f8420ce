import { expect, test } from './fixtures.ts';

test.describe('own messages', () => {
  test('keep their "mine" style after a reload, in this browser only', async ({
    openChat,
    browser,
    room,
  }) => {
    const context = await browser.newContext();
    try {
      const ann = await openChat({ context });
      await ann.nickname.fill('Ann');
      await ann.send('mine, before the reload');
      // Someone else, in another browser, with the very same nickname.
      const other = await openChat();
      await other.nickname.fill('Ann');
      await other.send('not mine, same nickname');
      await expect(ann.texts).toHaveText(['mine, before the reload', 'not mine, same nickname']);
      await expect(ann.messages.nth(0)).toHaveClass(/\bmine\b/);
      await expect(ann.messages.nth(1)).not.toHaveClass(/\bmine\b/);

      await ann.page.reload();
      await expect(ann.texts).toHaveText(['mine, before the reload', 'not mine, same nickname']);
      await expect(ann.messages.nth(0)).toHaveClass(/\bmine\b/);
      await expect(ann.messages.nth(1)).not.toHaveClass(/\bmine\b/);

      // Another tab of the same browser knows them too.
      const again = await openChat({ context, room });
      await expect(again.messages.nth(0)).toHaveClass(/\bmine\b/);
      await expect(other.messages.nth(0)).not.toHaveClass(/\bmine\b/);
      await expect(other.messages.nth(1)).toHaveClass(/\bmine\b/);
    } finally {
      await context.close();
    }
  });
});
