import { expect, test } from './fixtures.ts';

test.describe('when the browser blocks site storage', () => {
  test('the chat still works, and marks own messages while the page is open', async ({
    openChat,
    browser,
  }) => {
    const context = await browser.newContext();
    // What Chromium does with "Block all cookies and site data": the first touch throws.
    await context.addInitScript(() => {
      Object.defineProperty(window, 'localStorage', {
        get() {
          throw new DOMException('Access is denied for this document.', 'SecurityError');
        },
      });
    });
    try {
      const ann = await openChat({ context });
      await expect(ann.status).toHaveText('connected');
      await ann.nickname.fill('Ann');
      await ann.send('no storage here');
      await expect(ann.texts).toHaveText(['no storage here']);
      await expect(ann.nicknames).toHaveText(['Ann']);
      await expect(ann.messages.first()).toHaveClass(/\bmine\b/);
      // The fixture fails the test on any page error: none was thrown.
    } finally {
      await context.close();
    }
  });
});
