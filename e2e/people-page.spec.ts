/**
 * The page's side of who is here and who is typing (issue 21), against the
 * real server with its `/recv` answers given the fields the contract adds
 * (protocol.ts: `people`, `typing`) on their way to the page, and
 * `POST /typing` answered as the contract says: the server's side of them
 * is built apart. What is checked is the page: how it shows the fields,
 * what its polls send back, when it tells the server its person types. The
 * two-browser tests against the server's side replace the stand-ins here
 * once it exists.
 */
import type { RecvAnswer, TypingFields } from '../protocol/protocol.ts';
import { expect, serverDownErrors, test } from './fixtures.ts';

const BOB = { nickname: 'Bob', client: 'bob-client-1234' };

test.describe('the page, given the answers of a server that knows who is here', () => {
  test('shows the list, sends its version back, shows typists but itself, and tells its own typing', async ({
    openChat,
    server,
    room,
    allowConsoleErrors,
  }) => {
    allowConsoleErrors(...serverDownErrors);
    const people = { version: 1, names: ['<b>Ann</b>', 'Bob'], more: 3 };
    let bobTypes = false;
    const ann = await openChat({ room: `${room}-other` });
    await ann.page.route('**/recv?*', async (route) => {
      const query = new URL(route.request().url()).searchParams;
      const response = await route.fetch().catch(() => undefined);
      // The server is down: the page must see it as it would without the stand-in.
      if (response === undefined) return route.abort('connectionrefused');
      const body = (await response.json()) as RecvAnswer;
      // As the server does: the list only to a poll whose version is not the list's.
      if (query.get('people') !== String(people.version)) body.people = people;
      const own = { nickname: 'Me', client: query.get('client')! };
      if (bobTypes) body.typing = [own, BOB];
      await route.fulfill({ response, json: body });
    });
    const told: TypingFields[] = [];
    await ann.page.route('**/typing', async (route) => {
      told.push(route.request().postDataJSON() as TypingFields);
      await route.fulfill({ json: { status: 'ok' } });
    });
    await ann.page.goto(`${server.url}/?room=${room}`);
    await ann.nickname.fill('Me');

    // The list, each nickname as text.
    await expect(ann.people).toHaveText('Here: <b>Ann</b>, Bob and 3 more');
    await expect(ann.people.locator('.person')).toHaveText(['<b>Ann</b>', 'Bob']);
    await expect(ann.people.locator('b')).toHaveCount(0);
    // The next poll says which list it has, so the server need not send it again.
    await ann.page.waitForRequest(
      (request) => new URL(request.url()).searchParams.get('people') === '1',
    );

    // Someone types: shown, without the page's own entry.
    bobTypes = true;
    await server.send(room, 'a message wakes the poll');
    await expect(ann.typing).toHaveText('Bob is typing…');
    // Nobody names Bob again: he goes by himself, typingTtlMs (5 s) later.
    bobTypes = false;
    await expect(ann.typing).toHaveText('', { timeout: 10_000 });

    // The page tells its own typing once for a burst of keystrokes, with who and where.
    const client = new URL(
      (await ann.page.waitForRequest((request) => request.url().includes('/recv?'))).url(),
    ).searchParams.get('client');
    await ann.message.pressSequentially('hello', { delay: 50 });
    await expect.poll(() => told.length).toBe(1);
    expect(told).toEqual([{ room, client, nickname: 'Me' }]);

    // While the page reconnects the list is hidden; once back, the server sends it whole again.
    await server.stop();
    await expect(ann.status).toHaveText('reconnecting…');
    await expect(ann.people).toBeHidden();
    await server.start();
    await expect(ann.status).toHaveText('connected');
    await expect(ann.people).toHaveText('Here: <b>Ann</b>, Bob and 3 more');
    // A poll is always under way: let it end with the context, not in the stand-in.
    await ann.page.unrouteAll({ behavior: 'ignoreErrors' });
  });
});
