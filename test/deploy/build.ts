/**
 * The deploy suites run the built chat (`dist/`, `public/`), as production
 * does. `ensureBuilt()` builds it when it is missing or older than the
 * sources, with the same check `npm start` uses (scripts/build-if-stale.mjs),
 * so a suite never runs a stale build.
 *
 * Several suites may ask at once (vitest runs files in parallel): `flock`
 * (util-linux) lets one build while the others wait on the lock, then finds
 * the build fresh.
 */
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const MAIN_JS = join(ROOT, 'dist', 'server', 'main.js');

export async function ensureBuilt(): Promise<void> {
  const lockDir = join(ROOT, 'node_modules', '.cache');
  await mkdir(lockDir, { recursive: true });
  await promisify(execFile)(
    'flock',
    [join(lockDir, 'deploy-build.lock'), process.execPath, 'scripts/build-if-stale.mjs'],
    { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
  );
}

/** A module of the build, imported into the test process (typed as its source). */
export function builtModule<T>(path: string): Promise<T> {
  return import(pathToFileURL(join(ROOT, 'dist', path)).href) as Promise<T>;
}
