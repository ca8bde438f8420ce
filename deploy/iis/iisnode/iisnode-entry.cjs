/**
 * iisnode's entry point: the one file its handler runs (web.config beside
 * it). Copy both into the site folder, next to dist/ and public/.
 *
 * iisnode loads its script with `require()`, and `require()` cannot load the
 * chat's build, which is ES modules (`"type": "module"`): Node before 22.12
 * refuses outright. This file is CommonJS (`.cjs`), so `require()` loads it
 * on every Node version, and it imports the build with `import()`, which
 * CommonJS may always use.
 *
 * It first moves to its own folder (the site's), so the chat's relative
 * paths, `data/` for SQLite and `public/`, mean the site whatever folder
 * iisnode started Node in. iisnode hands the named pipe in PORT and the
 * web.config's appSettings as environment variables; the chat reads them.
 */
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');

process.chdir(__dirname);
import(pathToFileURL(join(__dirname, 'dist', 'server', 'main.js')).href).catch((error) => {
  process.stderr.write(`Cannot start the chat: ${error?.stack ?? error}\n`);
  process.exit(1);
});
