/**
 * The client is built from `client/` into `public/`, which Express (and IIS)
 * serve as static files. Files in `client/public/` are copied as they are.
 */
import { defineConfig } from 'vite';

export default defineConfig({
  root: 'client',
  build: {
    outDir: '../public',
    emptyOutDir: true,
    assetsDir: 'assets',
  },
  server: {
    // `npm run dev:client` serves the page with hot reload and sends the API to `npm run dev`.
    proxy: {
      '/send': 'http://127.0.0.1:3000',
      '/recv': 'http://127.0.0.1:3000',
      '/history': 'http://127.0.0.1:3000',
      '/time': 'http://127.0.0.1:3000',
      '/health': 'http://127.0.0.1:3000',
    },
  },
});
