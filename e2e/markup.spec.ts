import { expect, test } from './fixtures.ts';

// Each part would run a script if it were inserted as HTML.
const TEXT = '<img src=x onerror=window.__xss=1><b>bold</b><script>window.__xss=2</script>';
const NICKNAME = '<img src=x onerror=__xss=3>'; // Within the 32 characters of a nickname.

test.describe('markup in messages', () => {
  test('is shown as text and runs nothing, live and from history', async ({ openChat }) => {
    const ann = await openChat();
    const bob = await openChat();
    await expect(bob.status).toHaveText('connected');
    await ann.nickname.fill(NICKNAME);
    await ann.send(TEXT);

    const later = await openChat();
    for (const page of [ann, bob, later]) {
      await expect(page.texts).toHaveText([TEXT]);
      await expect(page.nicknames).toHaveText([NICKNAME]);
      await expect(page.page.locator('#messages :is(img, b, script)')).toHaveCount(0);
      expect(await page.page.evaluate(() => (window as { __xss?: unknown }).__xss)).toBeUndefined();
    }
  });
});
