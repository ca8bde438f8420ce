/**
 * The fixtures every e2e test uses:
 * - `server`: one real chat server per worker (`chat-server.ts`); a test that
 *   stops it gets it started again before the next test.
 * - `room`: a room of the test's own, so tests never share state, even on a
 *   shared database.
 * - `openChat()`: a page in a new browser context (its own storage, like
 *   another person's browser) that fails the test on any console error or
 *   uncaught page error. A test that stops the server on purpose allows the
 *   network errors that causes with `allowConsoleErrors`.
 */
import { randomBytes } from 'node:crypto';
import { type BrowserContext, test as base, expect } from '@playwright/test';
import { ChatPage } from './chat-page.ts';
import { ChatServer } from './chat-server.ts';

export interface OpenChatOptions {
  /** @default the test's room */
  room?: string;
  /** Reuse a context (same storage), e.g. to reload with a remembered nickname. */
  context?: BrowserContext;
  /** Where the page is opened from, e.g. a host name mapped to 127.0.0.1. @default the server's URL */
  origin?: string;
}

interface TestFixtures {
  room: string;
  openChat: (options?: OpenChatOptions) => Promise<ChatPage>;
  allowConsoleErrors: (...patterns: RegExp[]) => void;
  /** Console errors allowed in this test (set through `allowConsoleErrors`). */
  allowedConsoleErrors: RegExp[];
}

interface WorkerFixtures {
  server: ChatServer;
}

/** What the browser logs when a request finds the server down or refusing it. */
export const serverDownErrors = [
  /Failed to load resource: net::ERR_(CONNECTION_REFUSED|CONNECTION_RESET|EMPTY_RESPONSE)/,
  /Failed to load resource: the server responded with a status of 503/,
];

export const test = base.extend<TestFixtures, WorkerFixtures>({
  server: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright's fixture signature
    async ({}, use) => {
      const server = await ChatServer.start();
      await use(server);
      await server.close();
    },
    { scope: 'worker', timeout: 30_000 },
  ],

  // biome-ignore lint/correctness/noEmptyPattern: Playwright's fixture signature
  room: async ({}, use) => {
    await use(`e2e-${randomBytes(6).toString('hex')}`);
  },

  // biome-ignore lint/correctness/noEmptyPattern: Playwright's fixture signature
  allowedConsoleErrors: async ({}, use) => {
    await use([]);
  },

  allowConsoleErrors: async ({ allowedConsoleErrors }, use) => {
    await use((...patterns) => allowedConsoleErrors.push(...patterns));
  },

  openChat: async ({ browser, server, room, allowedConsoleErrors }, use, testInfo) => {
    const contexts: BrowserContext[] = [];
    const problems: string[] = [];

    await use(async (options = {}) => {
      const context = options.context ?? (await browser.newContext());
      if (!options.context) contexts.push(context);
      const page = await context.newPage();
      const tab = `page ${contexts.length}`;
      page.on('console', (message) => {
        if (message.type() !== 'error') return;
        const text = message.text();
        if (allowedConsoleErrors.some((pattern) => pattern.test(text))) return;
        problems.push(`${tab} console error: ${text}`);
      });
      page.on('pageerror', (error) => problems.push(`${tab} page error: ${error.message}`));
      await page.goto(`${options.origin ?? server.url}/?room=${options.room ?? room}`);
      return new ChatPage(page);
    });

    for (const context of contexts) await context.close();
    if (!server.running) await server.start();
    if (testInfo.status !== testInfo.expectedStatus) {
      await testInfo.attach('server.log', { body: server.log, contentType: 'text/plain' });
    }
    expect(problems, 'console and page errors').toEqual([]);
  },
});

export { expect };
