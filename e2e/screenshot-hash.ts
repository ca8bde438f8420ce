/**
 * What the README's screenshot was made from: the hash of the page's markup
 * and styles (`client/index.html`, `client/styles.css`). `npm run
 * screenshot` records it beside the picture; `test/scripts/screenshot.test.ts`
 * fails when the page's look changed and the picture was not made again.
 * The scripts (what the page does) are left out: a change there that shows
 * in the picture changes the markup or the styles too, as a rule.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
export const SCREENSHOT_HASH = resolve(ROOT, 'docs/screenshot.sha256');
const SOURCES = ['client/index.html', 'client/styles.css'];

/** SHA-256 of the page's markup and styles, line endings made alike. */
export function pageHash(): string {
  const hash = createHash('sha256');
  for (const file of SOURCES) {
    hash.update(`${file}\n`);
    hash.update(readFileSync(resolve(ROOT, file), 'utf8').replace(/\r\n/g, '\n'));
  }
  return hash.digest('hex');
}
