/**
 * Makes `docs/screenshot.png` for the README: two browsers chatting side by
 * side, with who is here, a day separator, a link, and one of them typing.
 * Run with `npm run screenshot` (it builds first).
 *
 * Each page is shot on its own, then both are framed as browser windows in
 * one HTML page (`setContent` with the shots as data URLs) and that is shot.
 *
 * Beside the picture it writes `docs/screenshot.sha256`, the hash of the
 * page's markup and styles it was made from (`pageHash`): a test fails
 * when they changed and the picture was not made again.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Browser, chromium, expect, type Page } from '@playwright/test';
import { chromiumLaunchOptions } from './browser.ts';
import { ChatPage } from './chat-page.ts';
import { ChatServer } from './chat-server.ts';
import { pageHash, SCREENSHOT_HASH } from './screenshot-hash.ts';

const OUT = resolve(import.meta.dirname, '../docs/screenshot.png');
const ROOM = 'demo';
const WINDOW = { width: 600, height: 640 };
/** Shot at twice the pixels, so the README image stays sharp on high-density screens. */
const SCALE = 2;

const conversation: [who: 'ann' | 'bob', text: string][] = [
  ['ann', 'Hi Bob! Is the new chat up?'],
  [
    'bob',
    'It is. Every message rides on an HTTP request the server holds open until something happens.',
  ],
  ['ann', 'No WebSockets at all?'],
  [
    'bob',
    'None. Plain GET /recv with a cursor, so it works through any proxy: https://en.wikipedia.org/wiki/Push_technology',
  ],
  ['ann', 'Nice. Shipping it today, then.'],
];

async function openChat(browser: Browser, url: string, nickname: string): Promise<ChatPage> {
  const context = await browser.newContext({
    viewport: WINDOW,
    deviceScaleFactor: SCALE,
    colorScheme: 'light',
  });
  const chat = new ChatPage(await context.newPage());
  await chat.page.goto(`${url}/?room=${ROOM}`);
  await chat.nickname.fill(nickname);
  return chat;
}

async function frame(page: Page, shots: { title: string; png: Buffer }[]): Promise<Buffer> {
  const windows = shots
    .map(
      ({ title, png }) => `
      <figure>
        <div class="bar"><i></i><i></i><i></i><span>localhost:3000/?room=${ROOM}</span></div>
        <img src="data:image/png;base64,${png.toString('base64')}" alt="">
        <figcaption>${title}</figcaption>
      </figure>`,
    )
    .join('');
  await page.setContent(`<!doctype html><style>
    body { margin: 0; }
    main { padding: 36px 40px 28px; display: flex; gap: 36px; width: max-content;
      background: linear-gradient(135deg, #dfe7fb, #f3e8fb); font: 15px system-ui, sans-serif; }
    figure { margin: 0; border-radius: 12px; overflow: hidden; background: #fff;
      box-shadow: 0 18px 40px rgba(30, 40, 80, .22), 0 2px 6px rgba(30, 40, 80, .12); }
    .bar { display: flex; align-items: center; gap: 7px; padding: 10px 14px; background: #eceef3;
      border-bottom: 1px solid #d9dce4; }
    .bar i { width: 12px; height: 12px; border-radius: 50%; background: #ff5f57; }
    .bar i:nth-child(2) { background: #febc2e; } .bar i:nth-child(3) { background: #28c840; }
    .bar span { margin-left: 14px; flex: 1; padding: 4px 12px; border-radius: 7px; background: #fff;
      color: #555; font-size: 13px; }
    img { display: block; width: ${WINDOW.width}px; }
    figcaption { padding: 8px; text-align: center; color: #6b7385; font-size: 13px;
      background: #f7f8fb; border-top: 1px solid #e6e8ee; }
  </style><main>${windows}</main>`);
  await page
    .locator('img')
    .evaluateAll((images: HTMLImageElement[]) =>
      Promise.all(images.map((image) => image.decode())),
    );
  return page.locator('main').screenshot();
}

async function main(): Promise<void> {
  const server = await ChatServer.start('fresh-sqlite');
  const browser = await chromium.launch({ ...chromiumLaunchOptions(), headless: true });
  try {
    const ann = await openChat(browser, server.url, 'Ann');
    const bob = await openChat(browser, server.url, 'Bob');
    const pages = { ann, bob };
    for (const [index, [who, text]] of conversation.entries()) {
      await pages[who].send(text);
      for (const chat of [ann, bob]) await expect(chat.texts).toHaveCount(index + 1);
    }
    // The count comes with the next poll answer (within the server's poll timeout).
    for (const chat of [ann, bob]) {
      await expect(chat.online).toHaveText('2 online', { timeout: 15_000 });
      await expect(chat.status).toHaveText('connected');
    }
    await expect(ann.people.locator('.person')).toHaveText(['Ann', 'Bob'], { timeout: 15_000 });
    await expect(ann.days).toHaveText(['Today']);
    await ann.message.blur();
    // Bob types: Ann's page says so under her messages.
    await bob.message.pressSequentially('See you at the release party!', { delay: 5 });
    await expect(ann.typing).toHaveText('Bob is typing…');

    const canvas = await browser.newPage({
      deviceScaleFactor: SCALE,
      viewport: { width: 2 * WINDOW.width + 200, height: WINDOW.height + 300 },
    });
    const png = await frame(canvas, [
      { title: 'Ann, in one browser', png: await ann.page.screenshot() },
      { title: 'Bob, in another', png: await bob.page.screenshot() },
    ]);
    mkdirSync(resolve(OUT, '..'), { recursive: true });
    writeFileSync(OUT, png);
    writeFileSync(SCREENSHOT_HASH, `${pageHash()}\n`);
    process.stdout.write(`wrote ${OUT} and ${SCREENSHOT_HASH}\n`);
  } finally {
    await browser.close();
    await server.close();
  }
}

await main();
