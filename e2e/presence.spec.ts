import { expect, test } from './fixtures.ts';

test.describe('who is online', () => {
  test('counts the open pages of the room and drops one that closes', async ({ openChat }) => {
    const ann = await openChat();
    // The count comes with each poll answer: the first comes within a poll timeout.
    await expect(ann.online).toHaveText('1 online');

    const bob = await openChat();
    await expect(ann.online).toHaveText('2 online');
    await expect(bob.online).toHaveText('2 online');

    // Closing the tab closes its waiting poll, and the server forgets Bob at once.
    await bob.page.close();
    await expect(ann.online).toHaveText('1 online');
  });

  test('shows the count as soon as a page opens, not a poll timeout later', async ({
    openChat,
  }) => {
    // The server answers a page's first poll with the count at once. The poll timeout
    // here is 4 s: a count within 2 s of connecting did not wait for a timeout.
    const ann = await openChat();
    await expect(ann.status).toHaveText('connected');
    await expect(ann.online).toHaveText('1 online', { timeout: 2_000 });
  });

  test('counts rooms apart', async ({ openChat, room }) => {
    const ann = await openChat();
    const other = await openChat({ room: `${room}-other` });
    await expect(ann.online).toHaveText('1 online');
    await expect(other.online).toHaveText('1 online');
  });
});
