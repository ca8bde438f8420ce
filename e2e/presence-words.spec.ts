/**
 * What the page says of who is here while it cannot know (issue 21, "Errors
 * in words"), and what its polls tell the server about the person. The
 * lists of names and typists across two browsers are in people.spec.ts.
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
  test('carries the person’s nickname, and the version of the list the server sent', async ({
    openChat,
  }) => {
    const ann = await openChat();
    await expect(ann.status).toHaveText('connected');
    await ann.nickname.fill('Ann Lee');
    // The poll under way left before the nickname was typed; the next one carries it,
    // and the version of the list the first answer brought.
    const poll = await ann.page.waitForRequest(
      (request) => new URL(request.url()).searchParams.get('nickname') === 'Ann Lee',
    );
    const query = new URL(poll.url()).searchParams;
    expect(query.get('room')).toBeTruthy();
    expect(query.get('people')).toMatch(/^\d+$/);
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
