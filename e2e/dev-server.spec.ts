/**
 * `npm run dev:client`: Vite serves the page with hot reload and proxies the
 * API to the chat server named by `CHAT_API_URL`, else by `PORT`
 * (vite.config.ts). Here the chat server runs on a random port, as it would
 * with `PORT=4000 npm run dev`, and the page, loaded from Vite, must chat.
 */
import { resolve } from 'node:path';
import { createServer, type ViteDevServer } from 'vite';
import { apiTarget } from '../vite.config.ts';
import { ChatPage } from './chat-page.ts';
import { expect, test } from './fixtures.ts';

async function startVite(env: Record<string, string | undefined>): Promise<ViteDevServer> {
  const saved = { PORT: process.env.PORT, CHAT_API_URL: process.env.CHAT_API_URL };
  Object.assign(process.env, env);
  for (const [name, value] of Object.entries(env))
    if (value === undefined) delete process.env[name];
  try {
    const vite = await createServer({
      configFile: resolve(import.meta.dirname, '../vite.config.ts'),
      logLevel: 'silent',
      server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false },
    });
    await vite.listen();
    return vite;
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

test.describe('the Vite dev server', () => {
  for (const [variable, env] of [
    ['PORT', (url: URL) => ({ PORT: url.port, CHAT_API_URL: undefined })],
    ['CHAT_API_URL', (url: URL) => ({ PORT: '1', CHAT_API_URL: url.origin })],
  ] as const) {
    test(`proxies the API to the chat server named by ${variable}`, async ({
      server,
      openChat,
      browser,
      room,
    }) => {
      const vite = await startVite(env(new URL(server.url)));
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        await page.goto(`${vite.resolvedUrls!.local[0]}?room=${room}`);
        const dev = new ChatPage(page);
        await expect(dev.status).toHaveText('connected');
        await dev.send('through the Vite proxy');
        // Stored by the real server: a page served by the server itself sees it.
        const direct = await openChat();
        await expect(direct.texts).toHaveText(['through the Vite proxy']);
      } finally {
        await context.close();
        await vite.close();
      }
    });
  }

  test('refuses a pipe path in PORT and asks for CHAT_API_URL', () => {
    expect(() => apiTarget({ PORT: '\\\\.\\pipe\\chat' })).toThrow(/set CHAT_API_URL/);
    expect(apiTarget({})).toBe('http://127.0.0.1:3000');
  });
});
