/**
 * The suites that start the chat as a process run the built chat (`dist/`,
 * `public/`), as production does: the deploy suites, and every server of the
 * multi-process suites (test/helpers/processes.ts). `ensureBuilt()` builds it
 * when it is missing or older than the sources, with the same check
 * `npm start` uses (scripts/build-if-stale.mjs), so a suite never runs a
 * stale build.
 *
 * The run builds once before any file starts (test/helpers/global-build.ts),
 * so the check that follows, before each start, finds the build fresh with
 * one look at the files' times, in this process. A source edited during a
 * run (watch mode) makes the next check build again: `flock` (util-linux)
 * then lets one file build while the others wait on the lock, and find the
 * build fresh.
 */
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { buildState } from '../../scripts/build-if-stale.mjs';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const MAIN_JS = join(ROOT, 'dist', 'server', 'main.js');

export async function ensureBuilt(): Promise<void> {
  if (buildState(ROOT).state === 'fresh') return;
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
