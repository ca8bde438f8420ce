/**
 * Vitest's global setup: builds the chat, when the build is missing or older
 * than the sources, once before any test file runs, so the suites that start
 * it as a process (build.ts) find it fresh and never race a build.
 */
import { ensureBuilt } from './build.ts';

export default async function setup(): Promise<void> {
  await ensureBuilt();
}
