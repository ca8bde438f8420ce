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

  test('a send the server refuses shows the server’s reason and keeps the text', async ({
    openChat,
    allowConsoleErrors,
  }) => {
    allowConsoleErrors(/Failed to load resource: the server responded with a status of 400/);
    const ann = await openChat();
    await expect(ann.status).toHaveText('connected');
    // Control characters only: the page counts two characters, the server strips them to nothing.
    const text = '\u0001\u0002';
    await ann.message.fill(text);
    await ann.message.press('Enter');
    await expect(ann.sendError).toHaveText(/Field "text"/);
    await expect(ann.message).toHaveValue(text);
    await expect(ann.pending).toHaveCount(0);
    await expect(ann.messages).toHaveCount(0);
  });
});

test.describe('the message field', () => {
  test('keeps a paste over the limit whole, counts it, and refuses to send it until shortened', async ({
    openChat,
  }) => {
    const ann = await openChat();
    await expect(ann.status).toHaveText('connected');
    const posts: string[] = [];
    ann.page.on('request', (request) => {
      if (request.url().endsWith('/send')) posts.push(request.postData() ?? '');
    });
    // Inserted as a paste is: a `maxlength` would cut it to 2,000 here, without a word.
    const pasted = `${'word '.repeat(617)}last`; // 3,089 characters
    await ann.message.focus();
    await ann.page.keyboard.insertText(pasted);
    await expect(ann.message).toHaveValue(pasted);
    await expect(ann.counter).toHaveText('3,089 / 2,000: 1,089 too many');
    await expect(ann.message).toHaveAttribute('aria-invalid', 'true');

    await ann.message.press('Enter');
    await expect(ann.sendError).toHaveText(
      'This message is 3,089 characters long; the limit is 2,000. Shorten it by 1,089 to send it.',
    );
    // The button says it is disabled (aria-disabled) but still answers a click with the reason.
    const button = ann.page.getByRole('button', { name: 'Send' });
    await expect(button).toHaveAttribute('aria-disabled', 'true');
    await ann.sendError.evaluate((el) => {
      el.textContent = '';
    });
    await button.click({ force: true });
    await expect(ann.sendError).toHaveText(/limit is 2,000/);
    await expect(ann.message).toHaveValue(pasted);
    await expect(ann.pending).toHaveCount(0);

    await ann.message.fill('short now');
    await expect(ann.sendError).toBeHidden();
    await expect(ann.counter).toBeHidden();
    await ann.message.press('Enter');
    await expect(ann.texts).toHaveText(['short now']);
    expect(posts).toHaveLength(1);
  });

  test('shows the counter near the limit and sends exactly the limit', async ({ openChat }) => {
    const ann = await openChat();
    await expect(ann.status).toHaveText('connected');
    await ann.message.fill('a'.repeat(1799));
    await expect(ann.counter).toBeHidden();
    await ann.message.fill('a'.repeat(2000));
    await expect(ann.counter).toHaveText('2,000 / 2,000');
    await ann.message.press('Enter');
    await expect(ann.texts).toHaveText(['a'.repeat(2000)]);
  });

  test('says why a message of spaces is not sent', async ({ openChat }) => {
    const ann = await openChat();
    await expect(ann.status).toHaveText('connected');
    await ann.message.fill('   \n   ');
    await ann.message.press('Enter');
    await expect(ann.sendError).toHaveText(/only spaces or blank lines is not sent/);
    await expect(ann.pending).toHaveCount(0);
    await ann.message.fill('');
    await ann.message.press('Enter');
    await expect(ann.sendError).toHaveText('Type a message first.');
  });

  test('keeps a nickname over the limit whole and says why it is refused', async ({ openChat }) => {
    const ann = await openChat();
    await expect(ann.status).toHaveText('connected');
    const long = 'N'.repeat(40);
    await ann.nickname.focus();
    await ann.page.keyboard.insertText(long);
    await expect(ann.nickname).toHaveValue(long);
    await ann.send('hello');
    await expect(ann.sendError).toHaveText(/nickname is 40 characters long; the limit is 32/);
    await expect(ann.messages).toHaveCount(0);
  });
});

test.describe('a room name the server would refuse', () => {
  test('is refused in words, with the room meant, before any request', async ({ openChat }) => {
    const page = await openChat({ room: 'Dev' });
    await expect(page.status).toHaveAttribute('data-status', 'stopped');
    await expect(page.notice).toHaveText(
      '“Dev” is not a room name. Room names use a–z, 0–9, - and _, up to 32 characters. Open #dev instead.',
    );
    // The API's pattern is for developers: nowhere on the page.
    await expect(page.page.locator('body')).not.toContainText('{0,31}');
    await expect(page.empty).toBeHidden();
    const asked = await page.page.evaluate(() =>
      performance
        .getEntriesByType('resource')
        .map((entry) => new URL(entry.name).pathname)
        .filter((path) => ['/history', '/recv', '/send'].includes(path)),
    );
    expect(asked).toEqual([]);

    await page.notice.getByRole('link', { name: '#dev' }).click();
    await expect(page.room).toHaveText('#dev');
    await expect(page.status).toHaveText('connected');
  });
});
