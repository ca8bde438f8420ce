import { expect, test } from './fixtures.ts';

test.describe('what assistive technology is told', () => {
  test('new messages go to a polite live log', async ({ openChat }) => {
    const ann = await openChat();
    await expect(ann.log).toHaveAttribute('aria-live', 'polite');
    await ann.send('announced');
    await expect(ann.log.locator('.text')).toHaveText(['announced']);
  });

  test('the online count is rewritten only when it changes', async ({ openChat, browser }) => {
    const context = await browser.newContext();
    // Count every change to the count's text, from before the page's own script runs.
    await context.addInitScript(() => {
      const w = window as unknown as { onlineWrites: number };
      w.onlineWrites = 0;
      document.addEventListener('DOMContentLoaded', () => {
        new MutationObserver((records) => {
          w.onlineWrites += records.length;
        }).observe(document.getElementById('online')!, {
          childList: true,
          characterData: true,
          subtree: true,
        });
      });
    });
    try {
      const ann = await openChat({ context });
      await expect(ann.online).toHaveText('1 online');
      const writes = () =>
        ann.page.evaluate(() => (window as unknown as { onlineWrites: number }).onlineWrites);
      const first = await writes();
      // Two more poll answers (poll timeout: 4 s in tests), each with the same count.
      for (let i = 0; i < 2; i += 1) {
        await ann.page.waitForResponse((response) => response.url().includes('/recv?'));
      }
      expect(await writes()).toBe(first);
      await expect(ann.online).toHaveText('1 online');
    } finally {
      await context.close();
    }
  });
});
