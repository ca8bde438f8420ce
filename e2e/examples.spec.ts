/**
 * The examples' two-tab demo, in a real browser: the 2011 page served by
 * examples/naive, with its own flaws, as examples/naive/README.md tells, and
 * examples/fixed's page, which fixes them.
 */
import { type Browser, expect, type Page, test } from '@playwright/test';
import { type ExampleProcess, sendForm, startExample } from '../test/examples/example-process.ts';

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
  test.describe(`the page of examples/${name}`, () => {
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
  });
}

test.describe('the page of examples/fixed', () => {
  test('puts a message in as text', async ({ browser }) => {
    const example = await startExample('fixed');
    try {
      const ann = await open(browser, example.url);
      await expect.poll(() => waiting(example)).toBe(1);
      await say(ann, 'Ann', '<i>not</i> <img src=x onerror="document.title=1"> markup');
      await expect(ann.locator('#messages p span')).toHaveText(
        '<i>not</i> <img src=x onerror="document.title=1"> markup',
      );
      await expect(ann.locator('#messages i, #messages img')).toHaveCount(0);
    } finally {
      for (const context of browser.contexts()) await context.close();
      await example.stop();
    }
  });

  test('gets what was sent between two of its polls, with its cursor', async ({ browser }) => {
    const example = await startExample('fixed');
    try {
      await sendForm(example.url, { nickname: 'Bob', text: 'before you came' });
      const ann = await open(browser, example.url);
      await expect(ann.locator('#messages p')).toHaveText(['Bob: before you came']);
      await expect.poll(() => waiting(example)).toBe(1);
    } finally {
      for (const context of browser.contexts()) await context.close();
      await example.stop();
    }
  });

  test('polls again after a failed poll, later each time, and chats once the server is back', async ({
    browser,
  }) => {
    let example = await startExample('fixed');
    try {
      const page = await (await browser.newContext()).newPage();
      // The page's timers run on a clock the test moves, so the waits between retries show.
      await page.clock.install();
      let polls = 0;
      page.on('request', (request) => {
        if (new URL(request.url()).pathname === '/recv') polls += 1;
      });
      await page.goto(example.url);
      await expect.poll(() => waiting(example)).toBe(1);
      await example.stop();
      await expect(page.getByRole('status')).toHaveText(/trying again in 1 s/);
      await page.clock.runFor(1_000);
      await expect(page.getByRole('status')).toHaveText(/trying again in 2 s/);
      await page.clock.runFor(2_000);
      await expect(page.getByRole('status')).toHaveText(/trying again in 4 s/);
      const failed = polls;
      example = await startExample('fixed', { PORT: String(example.port) });
      await page.clock.runFor(4_000);
      await expect.poll(() => waiting(example)).toBe(1);
      expect(polls).toBe(failed + 1);
      await sendForm(example.url, { nickname: 'Bob', text: 'back again' });
      await expect(page.locator('#messages p')).toHaveText(['Bob: back again']);
      // The first answer since the failures clears the notice.
      await expect(page.getByRole('status')).toHaveText('');
    } finally {
      for (const context of browser.contexts()) await context.close();
      await example.stop();
    }
  });
});

test.describe('the 2011 page on examples/naive', () => {
  test('its flaw: a message is inserted as HTML', async ({ browser }) => {
    const example = await startExample('naive');
    try {
      const ann = await open(browser, example.url);
      await expect.poll(() => waiting(example)).toBe(1);
      await say(ann, 'Ann', '<i>not</i> plain text');
      await expect(ann.locator('#messages p span i')).toHaveText('not');
    } finally {
      for (const context of browser.contexts()) await context.close();
      await example.stop();
    }
  });

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
