/**
 * The client is built from `client/` into `public/`, which Express (and IIS)
 * serve as static files. Files in `client/public/` are copied as they are.
 *
 * `npm run dev:client` serves the page with hot reload and sends the API
 * routes to the chat server: `CHAT_API_URL` when set (any URL, e.g.
 * `http://127.0.0.1:4000` or a server on another machine), else the server
 * that `npm run dev` starts with the same `PORT` (default 3000), so
 * `PORT=4000 npm run dev` and `PORT=4000 npm run dev:client` find each other.
 */
import { defineConfig } from 'vite';
import { API_ROUTES } from './server/http/api-routes.ts';

/** Where the API is, for the dev server's proxy. */
export function apiTarget(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CHAT_API_URL) return env.CHAT_API_URL;
  const port = env.PORT ?? '3000';
  if (!/^\d{1,5}$/.test(port)) {
    // A pipe or socket path (IIS, systemd): the proxy needs a URL.
    throw new Error(`PORT=${port} is not a TCP port: set CHAT_API_URL for npm run dev:client`);
  }
  return `http://127.0.0.1:${port}`;
}

export default defineConfig(({ command }) => ({
  root: 'client',
  build: {
    outDir: '../public',
    emptyOutDir: true,
    assetsDir: 'assets',
  },
  // The proxy is for `vite` (serve) only; a build must not depend on PORT.
  // Keys are anchored patterns: a plain '/send' is a prefix, and would also
  // send the page's own module '/sender.ts' to the API server.
  server:
    command === 'serve'
      ? {
          proxy: Object.fromEntries(
            API_ROUTES.map(({ path }) => [`^${path}(?:\\?|$)`, apiTarget()]),
          ),
        }
      : {},
}));
