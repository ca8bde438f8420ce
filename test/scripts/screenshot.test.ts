/**
 * The README's screenshot is of the page as it is: `npm run screenshot`
 * records the hash of the page's markup and styles beside the picture
 * (e2e/screenshot-hash.ts), and this fails when they changed since.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pageHash, SCREENSHOT_HASH } from '../../e2e/screenshot-hash.ts';

describe('docs/screenshot.png', () => {
  it('was made from the page as it is now (else run `npm run screenshot`)', () => {
    expect(existsSync(resolve(SCREENSHOT_HASH, '../screenshot.png'))).toBe(true);
    const recorded = readFileSync(SCREENSHOT_HASH, 'utf8').trim();
    expect(
      recorded,
      'client/index.html or client/styles.css changed: run `npm run screenshot`',
    ).toBe(pageHash());
  });
});
