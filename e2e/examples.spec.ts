/**
 * The examples' two-tab demo, in a real browser: the 2011 page served by
 * examples/naive and by examples/fixed. The page is the article's, with its
 * own flaws, and these tests show them as examples/naive/README.md tells.
 */
import { type Browser, expect, type Page, test } from '@playwright/test';
import { type ExampleProcess, startExample } from '../test/examples/example-process.ts';

async function open(browser: Browser, url: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(url);
  return page;
}

async function waiting(example: ExampleProcess): Promise<number> {
  const stats = (await (await fetch(`${example.url}/stats`)).json()) as { waiting: number };
  return stats.waiting;
}

async function say(page: Page, nickname: string, text: string): Promise<void> {
  await page.getByLabel('Nickname:').fill(nickname);
  await page.getByLabel('Message:').fill(text);
  await page.getByLabel('Message:').press('Enter');
}

for (const name of ['naive', 'fixed'] as const) {
  test.describe(`the 2011 page on examples/${name}`, () => {
    let example: ExampleProcess;
    test.beforeEach(async () => {
      example = await startExample(name);
    });
    test.afterEach(async ({ browser }) => {
      for (const context of browser.contexts()) await context.close();
      await example.stop();
    });

    test('two tabs chat both ways', async ({ browser }) => {
      const ann = await open(browser, example.url);
      const bob = await open(browser, example.url);
      await expect.poll(() => waiting(example)).toBe(2);
      await say(ann, 'Ann', 'Hi Bob!');
      await expect(bob.locator('#messages p')).toHaveText(['Ann: Hi Bob!']);
      await expect.poll(() => waiting(example)).toBe(2);
      await say(bob, 'Bob', 'Hello Ann');
      // Newest first, as the 2011 page prepends.
      await expect(ann.locator('#messages p')).toHaveText(['Bob: Hello Ann', 'Ann: Hi Bob!']);
      await expect(ann.getByLabel('Message:')).toHaveValue('');
    });

    test('its flaw: a message is inserted as HTML', async ({ browser }) => {
      const ann = await open(browser, example.url);
      await expect.poll(() => waiting(example)).toBe(1);
      await say(ann, 'Ann', '<i>not</i> plain text');
      await expect(ann.locator('#messages p span i')).toHaveText('not');
    });
  });
}

test.describe('the 2011 page on examples/naive', () => {
  test('its flaw: after one failed poll it never polls again', async ({ browser }) => {
    let example = await startExample('naive');
    try {
      const page = await (await browser.newContext()).newPage();
      // The page's timers run on a clock the test moves: a retry, however late, would show.
      await page.clock.install();
      const polls: string[] = [];
      page.on('request', (request) => {
        if (new URL(request.url()).pathname === '/recv') polls.push(request.url());
      });
      const failed = page.waitForEvent('requestfailed', (r) => r.url().includes('/recv'));
      await page.goto(example.url);
      await expect.poll(() => waiting(example)).toBe(1);
      await example.stop();
      await failed;
      example = await startExample('naive', { PORT: String(example.port) });
      await page.clock.runFor('10:00');
      // The server is back; the page is not: its loop ended with the failed poll.
      expect(polls).toHaveLength(1);
      expect(await waiting(example)).toBe(0);
    } finally {
      for (const context of browser.contexts()) await context.close();
      await example.stop();
    }
  });
});
