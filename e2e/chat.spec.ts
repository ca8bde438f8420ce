import { expect, test } from './fixtures.ts';

test.describe('chatting', () => {
  test('two people in two browsers talk both ways', async ({ openChat, room }) => {
    const ann = await openChat();
    const bob = await openChat();
    await ann.nickname.fill('Ann');
    await bob.nickname.fill('Bob');
    await expect(ann.room).toHaveText(`#${room}`);
    await expect(ann.status).toHaveText('connected');
    await expect(bob.status).toHaveText('connected');

    await ann.send('Hi Bob!');
    await expect(bob.texts).toHaveText(['Hi Bob!']);
    await expect(bob.nicknames).toHaveText(['Ann']);

    await bob.send('Hello Ann, how are you?');
    await expect(ann.texts).toHaveText(['Hi Bob!', 'Hello Ann, how are you?']);
    await expect(ann.nicknames).toHaveText(['Ann', 'Bob']);

    await ann.send('Fine, thanks.');
    for (const page of [ann, bob]) {
      await expect(page.texts).toHaveText(['Hi Bob!', 'Hello Ann, how are you?', 'Fine, thanks.']);
      await expect(page.pending).toHaveCount(0);
    }
    // Each message shows its time (hh:mm in the browser's locale).
    await expect(bob.messages.first().locator('time')).toHaveText(/\d{1,2}:\d{2}/);
  });

  test('Enter sends, Shift+Enter adds a line, and the field is cleared', async ({ openChat }) => {
    const ann = await openChat();
    await expect(ann.status).toHaveText('connected');
    await ann.message.fill('first line');
    await ann.message.press('Shift+Enter');
    await ann.message.pressSequentially('second line');
    await expect(ann.texts).toHaveCount(0);
    await ann.message.press('Enter');
    await expect(ann.texts).toHaveText(['first line\nsecond line']);
    await expect(ann.message).toHaveValue('');
  });

  test('the nickname is remembered after a reload', async ({ openChat, browser, room }) => {
    const context = await browser.newContext();
    try {
      const first = await openChat({ context });
      await first.nickname.fill('Zoë');
      await first.send('I am Zoë');
      await expect(first.nicknames).toHaveText(['Zoë']);
      await first.page.close();

      const again = await openChat({ context, room });
      await expect(again.nickname).toHaveValue('Zoë');
      await expect(again.texts).toHaveText(['I am Zoë']);
    } finally {
      await context.close();
    }
  });

  test('a long word wraps inside the page', async ({ openChat }) => {
    const ann = await openChat();
    await ann.page.setViewportSize({ width: 375, height: 700 });
    await ann.send('x'.repeat(400));
    await expect(ann.texts).toHaveCount(1);
    const overflow = await ann.page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBe(0);
  });

  test('a refused send shows the server’s reason and keeps the text', async ({
    openChat,
    allowConsoleErrors,
  }) => {
    allowConsoleErrors(/Failed to load resource: the server responded with a status of 400/);
    const ann = await openChat();
    await expect(ann.status).toHaveText('connected');
    // The field's maxlength stops typing at 2000; a script is not stopped, and the server is the judge.
    const tooLong = 'a'.repeat(2001);
    await ann.message.evaluate((field: HTMLTextAreaElement, text) => {
      field.value = text;
    }, tooLong);
    await ann.message.press('Enter');
    await expect(ann.sendError).toHaveText(/longer than 2000 characters/);
    await expect(ann.message).toHaveValue(tooLong);
    await expect(ann.pending).toHaveCount(0);
    await expect(ann.messages).toHaveCount(0);
  });
});

test.describe('a room name the server refuses', () => {
  test('shows the server’s reason instead of polling', async ({ openChat, allowConsoleErrors }) => {
    allowConsoleErrors(/Failed to load resource: the server responded with a status of 400/);
    const page = await openChat({ room: 'Not-A-Room' });
    await expect(page.status).toHaveText(/must match/);
    await expect(page.status).toHaveAttribute('data-status', 'stopped');
  });
});
