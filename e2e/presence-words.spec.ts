/**
 * What the page says of who is here while it cannot know (issue 21, "Errors
 * in words"), and what its polls tell the server about the person. The
 * lists of names and typists across two browsers need the server's side of
 * issue 21 and are tested with it.
 */
import { expect, serverDownErrors, test } from './fixtures.ts';

test.describe('the online count while the page is reconnecting', () => {
  test('is hidden, and comes back with the next answer', async ({
    openChat,
    server,
    allowConsoleErrors,
  }) => {
    allowConsoleErrors(...serverDownErrors);
    const ann = await openChat();
    await expect(ann.online).toHaveText('1 online');
    await expect(ann.online).toBeVisible();

    await server.stop();
    await expect(ann.status).toHaveText('reconnecting…');
    await expect(ann.online).toBeHidden();
    await expect(ann.people).toBeHidden();

    await server.start();
    await expect(ann.status).toHaveText('connected');
    await expect(ann.online).toBeVisible();
    await expect(ann.online).toHaveText('1 online');
  });
});

test.describe('each poll', () => {
  test('carries the person’s nickname, and no list version before the server sent one', async ({
    openChat,
  }) => {
    const ann = await openChat();
    await expect(ann.status).toHaveText('connected');
    await ann.nickname.fill('Ann Lee');
    // The poll under way left before the nickname was typed; the next one carries it.
    const poll = await ann.page.waitForRequest(
      (request) => new URL(request.url()).searchParams.get('nickname') === 'Ann Lee',
    );
    const query = new URL(poll.url()).searchParams;
    expect(query.get('room')).toBeTruthy();
    expect(query.has('people')).toBe(false);
  });

  test('leaves out a nickname the server would refuse, and polling goes on', async ({
    openChat,
  }) => {
    const ann = await openChat();
    await expect(ann.status).toHaveText('connected');
    const nicknameOfNextPoll = async () => {
      const poll = await ann.page.waitForRequest((request) => request.url().includes('/recv?'));
      return new URL(poll.url()).searchParams.get('nickname');
    };
    await ann.nickname.fill('Ann');
    await expect.poll(nicknameOfNextPoll, { timeout: 15_000 }).toBe('Ann');
    // Too long: a poll carrying it would be refused, and the page would stop polling.
    await ann.nickname.fill('N'.repeat(40));
    expect(await nicknameOfNextPoll()).toBeNull();
    await ann.send('still here');
    await expect(ann.sendError).toHaveText(/nickname is 40 characters long/);
    await expect(ann.status).toHaveText('connected');
    expect(await nicknameOfNextPoll()).toBeNull();
  });
});

test.describe('typing', () => {
  test('is not told to a server that has not shown it knows of it', async ({ openChat }) => {
    const ann = await openChat();
    await expect(ann.status).toHaveText('connected');
    const told: string[] = [];
    ann.page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/typing') told.push(request.url());
    });
    await ann.message.pressSequentially('hello there');
    await ann.message.press('Enter');
    await expect(ann.texts).toHaveText(['hello there']);
    await ann.message.pressSequentially('and again');
    await ann.message.press('Enter');
    await expect(ann.texts).toHaveText(['hello there', 'and again']);
    // A POST /typing would have been a 404 here, and a console error failing the test.
    expect(told).toEqual([]);
    await expect(ann.typing).toHaveText('');
  });
});
