import { expect, test } from './fixtures.ts';

test.describe('history', () => {
  test('a page opened later shows what was said before', async ({ openChat }) => {
    const ann = await openChat();
    await ann.nickname.fill('Ann');
    await ann.send('one');
    await ann.send('two');
    await expect(ann.texts).toHaveText(['one', 'two']);

    const bob = await openChat();
    await expect(bob.texts).toHaveText(['one', 'two']);
    await expect(bob.nicknames).toHaveText(['Ann', 'Ann']);
  });

  test('shows the latest 50, and older ones on scrolling up, each once', async ({
    openChat,
    server,
    room,
  }) => {
    const all = Array.from({ length: 60 }, (_, i) => `message ${i + 1}`);
    for (const text of all) await server.send(room, text);

    const ann = await openChat();
    await expect(ann.texts).toHaveText(all.slice(10));
    // It opens at the newest message.
    await expect(ann.texts.last()).toBeInViewport();

    await ann.scrollArea.hover();
    await ann.page.mouse.wheel(0, -100_000);
    await expect(ann.texts).toHaveText(all);
    await expect(ann.page.getByText('This is the start of the room.')).toBeVisible();
    // The older page went above: what the reader was looking at did not jump away.
    await expect(ann.texts.nth(10)).toBeInViewport();
  });
});
