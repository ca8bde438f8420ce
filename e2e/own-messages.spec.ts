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

test.describe('a send', () => {
  // Behind a shared address (a NAT) each browser's sends count in a share of
  // their own (server/http/rate-limit.ts): the page names itself as its polls do.
  test("carries the browser's client id, the one its polls carry", async ({ openChat }) => {
    const ann = await openChat();
    await expect(ann.status).toHaveText('connected');
    const polls: string[] = [];
    const sends: string[] = [];
    ann.page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname === '/recv') polls.push(url.searchParams.get('client') ?? '');
      if (url.pathname === '/send') sends.push(request.postDataJSON().client);
    });
    await ann.send('counted as mine');
    await expect(ann.texts).toHaveText(['counted as mine']);
    await expect.poll(() => polls.length).toBeGreaterThan(0);
    expect(sends).toHaveLength(1);
    expect(sends[0]).toMatch(/^[A-Za-z0-9_-]{22,}$/);
    expect(sends[0]).toBe(polls[0]);
  });
});
