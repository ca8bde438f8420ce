/**
 * Who is here and who is typing (issue 21): two browsers, each its own
 * context, against the real server (production build). The test server's
 * timings (`chat-server.ts`): polls of 4 s, a presence grace of 1 s, joins
 * and leaves told within PRESENCE_NOTIFY_MS (3 s), a typist counted 3 s
 * after their last `POST /typing`.
 */
import type { TypingFields } from '../protocol/protocol.ts';
import type { ChatPage } from './chat-page.ts';
import { expect, serverDownErrors, test } from './fixtures.ts';

/** Opens a page and gives it a nickname, which its next poll carries. */
async function person(open: () => Promise<ChatPage>, nickname: string): Promise<ChatPage> {
  const page = await open();
  await page.nickname.fill(nickname);
  return page;
}

test.describe('who is here', () => {
  test("each browser's list shows both nicknames, and a closed browser leaves it", async ({
    openChat,
  }) => {
    const ann = await person(openChat, 'Ann');
    const bob = await person(openChat, 'Bob');
    await expect(ann.people.locator('.person')).toHaveText(['Ann', 'Bob']);
    await expect(bob.people.locator('.person')).toHaveText(['Ann', 'Bob']);
    await expect(ann.people).toHaveText('Here: Ann and Bob');

    // Closing the browser closes its waiting poll, and Bob leaves a second
    // later (the grace). If the browser closes between two of Bob's polls
    // (one just answered, the next not yet sent), there is no poll to close:
    // Bob then leaves once his presence window ends (the 4 s poll plus the
    // 1 s grace). Either way Ann is told at the next notice (3 s): 8 s at
    // most. With Redis presence (CI sets REDIS_URL) the notice first fetches
    // the shared counts (Presence.refresh), so the same 8 s and a sync.
    await bob.page.context().close();
    await expect(ann.people.locator('.person')).toHaveText(['Ann'], { timeout: 10_000 });
  });

  test('shows nicknames as text, never as markup', async ({ openChat }) => {
    const ann = await person(openChat, 'Ann');
    await person(openChat, '<b>Bob</b>');
    await expect(ann.people.locator('.person')).toHaveText(['<b>Bob</b>', 'Ann']);
    await expect(ann.people.locator('b')).toHaveCount(0);
  });

  test('hides the list while reconnecting, and gets it whole again once back', async ({
    openChat,
    server,
    allowConsoleErrors,
  }) => {
    allowConsoleErrors(...serverDownErrors);
    const ann = await person(openChat, 'Ann');
    await person(openChat, 'Bob');
    await expect(ann.people.locator('.person')).toHaveText(['Ann', 'Bob']);
    // The next poll says which list it holds, so the server need not send it again.
    await ann.page.waitForRequest((request) => /[?&]people=\d+/.test(request.url()));

    await server.stop();
    await expect(ann.status).toHaveText('reconnecting…');
    await expect(ann.people).toBeHidden();
    await server.start();
    await expect(ann.status).toHaveText('connected');
    // A restarted server knows nobody's version: the page asks without one and gets it all.
    await expect(ann.people.locator('.person')).toHaveText(['Ann', 'Bob']);
  });
});

test.describe('names right at once', () => {
  test('a rename reaches the other browser within 1 s, without a send', async ({ openChat }) => {
    const ann = await person(openChat, 'Ann');
    const bob = await person(openChat, 'Bob');
    await expect(ann.people.locator('.person')).toHaveText(['Ann', 'Bob']);
    await expect(bob.people.locator('.person')).toHaveText(['Ann', 'Bob']);
    await bob.nickname.fill('Robert');
    await expect(ann.people.locator('.person')).toHaveText(['Ann', 'Robert'], { timeout: 1_000 });
    await expect(bob.people.locator('.person')).toHaveText(['Ann', 'Robert'], { timeout: 1_000 });
    await expect(ann.messages).toHaveCount(0);
  });

  test('two browsers under one name are told apart alike in both: "Cy", "Cy (2)"', async ({
    openChat,
  }) => {
    const one = await person(openChat, 'Ann');
    const two = await person(openChat, 'Bob');
    await expect(one.people.locator('.person')).toHaveText(['Ann', 'Bob']);
    await one.nickname.fill('Cy');
    await two.nickname.fill('Cy');
    for (const page of [one, two]) {
      await expect(page.people.locator('.person')).toHaveText(['Cy', 'Cy (2)']);
      await expect(page.people).toHaveText('Here: Cy and Cy (2)');
    }
  });
});

test.describe('who is typing', () => {
  test('"Ann is typing…" shows in the other browser within 1 s, never in her own, and goes within 5 s', async ({
    openChat,
    room,
  }) => {
    const ann = await person(openChat, 'Ann');
    const bob = await person(openChat, 'Bob');
    // Both lists settled: both pages' polls wait, and both pages know the server speaks of people.
    await expect(ann.people.locator('.person')).toHaveText(['Ann', 'Bob']);
    await expect(bob.people.locator('.person')).toHaveText(['Ann', 'Bob']);

    const told: TypingFields[] = [];
    ann.page.on('request', (request) => {
      if (request.url().endsWith('/typing')) told.push(request.postDataJSON() as TypingFields);
    });
    await ann.message.pressSequentially('hello', { delay: 30 });
    await expect(bob.typing).toHaveText('Ann is typing…', { timeout: 1_000 });
    await expect(ann.typing).toHaveText('');
    // One notice for the burst of keystrokes, saying who and where.
    expect(told).toEqual([
      { room, client: expect.stringMatching(/^[A-Za-z0-9_-]{8,64}$/), nickname: 'Ann' },
    ]);

    // Ann stops: the line goes within 5 s.
    await expect(bob.typing).toHaveText('', { timeout: 5_000 });
  });

  test('stores nothing: the message list stays as it was', async ({ openChat }) => {
    const ann = await person(openChat, 'Ann');
    const bob = await person(openChat, 'Bob');
    await ann.send('a real message');
    await expect(bob.texts).toHaveText(['a real message']);
    await expect(bob.people.locator('.person')).toHaveText(['Ann', 'Bob']);
    await ann.message.pressSequentially('draft', { delay: 30 });
    await expect(bob.typing).toHaveText('Ann is typing…');
    await bob.page.reload();
    await expect(bob.texts).toHaveText(['a real message']);
  });

  test('paste-and-send: the other browser shows no typing line at any point in the 5 s after the message', async ({
    openChat,
  }) => {
    const ann = await person(openChat, 'Ann');
    const bob = await person(openChat, 'Bob');
    await expect(ann.people.locator('.person')).toHaveText(['Ann', 'Bob']);
    await expect(bob.people.locator('.person')).toHaveText(['Ann', 'Bob']);

    // Bob's page notes every change of its typing line and of its messages,
    // with the time, from before Ann pastes until 5 s after her message shows.
    await bob.page.evaluate(() => {
      const typing = document.querySelector('#typing')!;
      const messages = document.querySelector('#messages')!;
      const seen: { at: number; typing: string; messages: number }[] = [];
      const note = () =>
        seen.push({
          at: performance.now(),
          typing: typing.textContent ?? '',
          messages: messages.children.length,
        });
      const observer = new MutationObserver(note);
      observer.observe(document.body, { subtree: true, childList: true, characterData: true });
      const w = window as unknown as { watched: Promise<typeof seen> };
      w.watched = new Promise((resolve) => {
        const arrived = new MutationObserver(() => {
          if (messages.querySelectorAll('.message').length < 2) return;
          arrived.disconnect();
          note();
          setTimeout(() => {
            observer.disconnect();
            resolve(seen);
          }, 5_000);
        });
        arrived.observe(messages, { childList: true, subtree: true });
      });
    });

    // Ann types a line and sends it, so the room was woken for typing just
    // now; then she pastes the next (one input event, a new draft, told at
    // once) and sends it: the wake that notice owes comes after her message.
    await ann.message.pressSequentially('one', { delay: 30 });
    await expect(bob.typing).toHaveText('Ann is typing…');
    await ann.message.press('Enter');
    await ann.message.fill('pasted in one go');
    await ann.message.press('Enter');
    await expect(bob.texts).toHaveText(['one', 'pasted in one go']);
    const seen = await bob.page.evaluate(
      () =>
        (window as unknown as { watched: Promise<{ typing: string; messages: number }[]> }).watched,
    );
    const afterMessage = seen.filter((change) => change.messages >= 2);
    expect(afterMessage.length).toBeGreaterThan(0);
    expect(afterMessage.filter((change) => change.typing !== '')).toEqual([]);
  });

  test('a draft emptied by hand tells the room it stopped', async ({ openChat }) => {
    const ann = await person(openChat, 'Ann');
    const bob = await person(openChat, 'Bob');
    await expect(ann.people.locator('.person')).toHaveText(['Ann', 'Bob']);
    await expect(bob.people.locator('.person')).toHaveText(['Ann', 'Bob']);
    await ann.message.pressSequentially('hello', { delay: 30 });
    await expect(bob.typing).toHaveText('Ann is typing…');
    const stop = ann.page.waitForRequest(
      (request) =>
        request.url().endsWith('/typing') &&
        (request.postDataJSON() as TypingFields).stopped === true,
    );
    await ann.message.fill('');
    await stop;
    await expect(bob.typing).toHaveText('');
  });
});
