/**
 * Builds the chat (`npm run build`) only when the build is missing or older
 * than its sources, so `npm start` works both on a fresh clone (it builds)
 * and in a production copy (dev dependencies pruned, maybe no `client/`), where
 * it must not try to run Vite.
 *
 * Plain JavaScript on purpose: it runs before anything is built, in copies
 * that have no TypeScript tooling. `scripts/start.mjs` calls it; the deploy
 * tests run it directly (`node scripts/build-if-stale.mjs`) to get a fresh
 * build before they start the built chat.
 *
 * The build is `dist/server/main.js` (tsc) and `public/index.html` (Vite): both
 * are rewritten by every build, so the older of the two dates the build.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** What `npm run build` writes. */
const OUTPUTS = ['dist/server/main.js', 'public/index.html'];
/** What it reads: a change to any of these makes the build stale. */
const SOURCES = [
  'server',
  'protocol',
  'client',
  'vite.config.ts',
  'tsconfig.base.json',
  'tsconfig.build.json',
];

/** Newest modification time (ms) under `path`, or 0 when it does not exist. */
function newest(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = 0;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

/**
 * `missing`: some output is absent; `stale`: a source is newer than the
 * build; `fresh` otherwise (also when no source is there to compare: a
 * production copy without them).
 */
export function buildState(root = ROOT) {
  const outputs = OUTPUTS.map((path) => join(root, path));
  if (!outputs.every((path) => existsSync(path))) return { state: 'missing' };
  const built = Math.min(...outputs.map((path) => statSync(path).mtimeMs));
  const changed = Math.max(...SOURCES.map((path) => newest(join(root, path))));
  return { state: changed > built ? 'stale' : 'fresh' };
}

/** Why the chat cannot be built here, or undefined when it can. */
function cannotBuild(root) {
  if (!existsSync(join(root, 'client')) || !existsSync(join(root, 'server'))) {
    return 'the sources (client/, server/) are not here';
  }
  const require = createRequire(join(root, 'package.json'));
  try {
    require.resolve('vite/package.json');
    require.resolve('typescript/package.json');
    return undefined;
  } catch {
    return 'the build tools (Vite, TypeScript: dev dependencies) are not installed';
  }
}

/** Runs `npm run build` with the npm that runs us (npm start), else the one on PATH. */
function runBuild(root) {
  const npmCli = process.env.npm_execpath;
  const result = npmCli?.endsWith('.js')
    ? spawnSync(process.execPath, [npmCli, 'run', 'build'], { cwd: root, stdio: 'inherit' })
    : spawnSync('npm', ['run', 'build'], {
        cwd: root,
        stdio: 'inherit',
        shell: process.platform === 'win32',
      });
  return result.status === 0;
}

/**
 * Builds when needed. Returns true when the chat can start: the build is
 * there, fresh or (without build tools) at least present. Says why on stderr.
 */
export function buildIfStale({
  root = ROOT,
  log = (line) => process.stderr.write(`${line}\n`),
} = {}) {
  const { state } = buildState(root);
  if (state === 'fresh') return true;
  const why =
    state === 'missing'
      ? 'no build yet (dist/server/main.js and public/index.html)'
      : 'the build is older than the sources';
  const reason = cannotBuild(root);
  if (reason === undefined) {
    log(`npm start: ${why}: running \`npm run build\` first.`);
    if (runBuild(root)) return true;
    log('npm start: the build failed (see above); not starting.');
    return false;
  }
  if (state === 'stale') {
    // A production install (dev dependencies pruned) cannot rebuild: serve the
    // build it has, but say so, since the sources beside it say otherwise.
    log(
      `npm start: ${why}, but it cannot be rebuilt here (${reason}): starting the existing build. Rebuild with \`npm ci && npm run build\` to serve the new sources.`,
    );
    return true;
  }
  log(
    `npm start: ${why}, and it cannot be built here: ${reason}. Run \`npm ci && npm run build\` (here, or where you build), then start again.`,
  );
  return false;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exit(buildIfStale() ? 0 : 1);
}
