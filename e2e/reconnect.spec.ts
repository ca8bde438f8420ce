import { expect, serverDownErrors, test } from './fixtures.ts';

test.describe('when the server restarts', () => {
  test.beforeEach(({ allowConsoleErrors }) => {
    // The pages' requests fail while the server is down: expected here, and only here.
    allowConsoleErrors(...serverDownErrors);
  });

  test('both pages reconnect by themselves, and nothing is lost or doubled', async ({
    openChat,
    server,
    room,
  }) => {
    const ann = await openChat();
    const bob = await openChat();
    await ann.nickname.fill('Ann');
    await bob.nickname.fill('Bob');
    await ann.send('before the restart');
    await expect(bob.texts).toHaveText(['before the restart']);

    await server.stop();
    await expect(ann.status).toHaveText('reconnecting…');
    await expect(bob.status).toHaveText('reconnecting…');

    await server.start();
    // Most likely sent while both pages still back off: they must catch up on it.
    await server.send(room, 'while you were away');
    await expect(ann.status).toHaveText('connected');
    await expect(bob.status).toHaveText('connected');

    await bob.send('after the restart, from Bob');
    await expect(ann.texts.last()).toHaveText('after the restart, from Bob');
    await ann.send('after the restart, from Ann');

    const expected = [
      'before the restart',
      'while you were away',
      'after the restart, from Bob',
      'after the restart, from Ann',
    ];
    await expect(ann.texts).toHaveText(expected);
    await expect(bob.texts).toHaveText(expected);
    expect((await server.history(room)).map((message) => message.text)).toEqual(expected);
  });

  test('says so in words while the server is down, moves nothing, and every page is back within 1 s of its return', async ({
    openChat,
    server,
  }) => {
    const pages = [await openChat(), await openChat()];
    for (const chat of pages) await expect(chat.status).toHaveText('connected');
    const banner = (chat: (typeof pages)[number]) => chat.page.locator('#outage');
    const layout = (chat: (typeof pages)[number]) =>
      chat.page.evaluate(() =>
        ['#scroll-area', '#composer', '.topbar'].map((selector) => {
          const box = document.querySelector(selector)!.getBoundingClientRect();
          return [box.top, box.height];
        }),
      );
    const before = await Promise.all(pages.map(layout));

    await server.stop();
    for (const chat of pages) {
      await expect(banner(chat)).toHaveText(
        'Reconnecting… your messages will be sent when the server is back',
        { timeout: 1_000 },
      );
    }
    // Down for about ten seconds: over that window the banner stays and nothing moves.
    const downUntil = Date.now() + 10_000;
    await expect
      .poll(
        async () => {
          for (const [index, chat] of pages.entries()) {
            if (!(await banner(chat).isVisible())) return 'banner gone while down';
            expect(await layout(chat)).toEqual(before[index]);
          }
          return Date.now() >= downUntil ? 'held' : 'holding';
        },
        { timeout: 15_000, intervals: [250] },
      )
      .toBe('held');

    await server.start();
    // Both pages are timed from the same moment, the server's return.
    const back = Date.now() + 1_000;
    await Promise.all(
      pages.map(async (chat) => {
        await expect(banner(chat)).toBeHidden({ timeout: Math.max(1, back - Date.now()) });
        await expect(chat.status).toHaveText('connected', {
          timeout: Math.max(1, back - Date.now()),
        });
      }),
    );
  });

  test('a message sent while it is down is delivered once it is back', async ({
    openChat,
    server,
    room,
  }) => {
    const ann = await openChat();
    const bob = await openChat();
    await expect(ann.status).toHaveText('connected');
    await expect(bob.status).toHaveText('connected');

    await server.stop();
    await expect(ann.status).toHaveText('reconnecting…');
    await ann.send('sent while the server was down');
    await expect(ann.pending).toHaveCount(1);
    await expect(ann.pending.locator('.text')).toHaveText('sent while the server was down');
    await expect(ann.pending.locator('time')).toHaveText('retrying…');

    await server.start();
    for (const page of [ann, bob]) {
      await expect(page.texts).toHaveText(['sent while the server was down']);
      await expect(page.pending).toHaveCount(0);
    }
    expect((await server.history(room)).map((message) => message.text)).toEqual([
      'sent while the server was down',
    ]);
  });
});

test.describe('when the answer to a send is lost', () => {
  test('the retry carries the same key and the message is stored once', async ({
    openChat,
    server,
    room,
    allowConsoleErrors,
  }) => {
    allowConsoleErrors(...serverDownErrors);
    const ann = await openChat();
    await expect(ann.status).toHaveText('connected');

    const keys: string[] = [];
    ann.page.on('request', (request) => {
      if (request.url().endsWith('/send')) keys.push(request.postDataJSON().key);
    });
    // The first attempt reaches the server and is stored; its answer never reaches the page.
    let cut = false;
    await ann.page.route('**/send', async (route) => {
      if (cut) return route.continue();
      cut = true;
      await route.fetch();
      await route.abort('connectionreset');
    });

    await ann.send('said once');
    await expect(ann.texts).toHaveText(['said once']);
    await expect(ann.pending).toHaveCount(0);
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    expect((await server.history(room)).map((message) => message.text)).toEqual(['said once']);
  });
});

test.describe('when a page loses its network for a while', () => {
  test('it catches up on what was said meanwhile, each message once', async ({
    openChat,
    server,
    room,
    allowConsoleErrors,
  }) => {
    allowConsoleErrors(/net::ERR_INTERNET_DISCONNECTED/);
    const ann = await openChat();
    await ann.send('first');
    await expect(ann.texts).toHaveText(['first']);

    await ann.page.context().setOffline(true);
    await expect(ann.status).toHaveText('reconnecting…');
    await server.send(room, 'missed one');
    await server.send(room, 'missed two');
    await ann.page.context().setOffline(false);

    await expect(ann.status).toHaveText('connected');
    await expect(ann.texts).toHaveText(['first', 'missed one', 'missed two']);
  });
});
