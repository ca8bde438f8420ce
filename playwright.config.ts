/**
 * End-to-end tests: real Chromium against the production build, run by
 * `npm run test:e2e` (which builds first). The tests start the chat server
 * themselves (`e2e/chat-server.ts`) because some of them restart it.
 */
import { defineConfig, devices } from '@playwright/test';
import { chromiumLaunchOptions } from './e2e/browser.ts';

export default defineConfig({
  testDir: 'e2e',
  // One worker: the tests share one server process, and two cores are plenty busy.
  workers: 1,
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  retries: 0,
  timeout: 60_000,
  // Long polls answer within the server's poll timeout (4 s in tests): wait past it.
  expect: { timeout: 15_000 },
  reporter: process.env.CI ? [['list'], ['html', { open: 'never' }]] : 'list',
  use: {
    headless: true,
    trace: 'retain-on-failure',
  },
  projects: [
    {
      name: 'chromium',
      use: { ...devices['Desktop Chrome'], launchOptions: chromiumLaunchOptions() },
    },
  ],
});
