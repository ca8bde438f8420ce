/** scripts/doc-links.ts: the rules `npm run check:docs` holds README.md and docs/*.md to. */
import { describe, expect, it } from 'vitest';
import { checkLinks, type Files, holds, namedIdentifier } from '../../scripts/doc-links.ts';

const code = ['/** The hub. */', 'export class Hub {', '  catchUp(room) {', '  #remove(w) {', '}'];
const files: Files = {
  exists: (path) => path === 'hub.ts' || path === 'docs',
  read: (path) => (path === 'hub.ts' ? code.join('\n') : undefined),
};
const check = (markdown: string) => checkLinks(markdown, (target) => target, files);

describe('namedIdentifier', () => {
  it('should take the member after the last dot, and drop a call', () => {
    expect(namedIdentifier('[`Hub.catchUp`]')).toBe('catchUp');
    expect(namedIdentifier('`answer()`')).toBe('answer');
    expect(namedIdentifier('`#remove`')).toBe('#remove');
  });

  it('should see no identifier in plain words or a file name', () => {
    expect(namedIdentifier('the hub')).toBeUndefined();
    expect(namedIdentifier('`recv.ts`')).toBeUndefined();
    expect(namedIdentifier('`server/hub/`')).toBeUndefined();
  });
});

describe('holds', () => {
  it('should match whole words only', () => {
    expect(holds('  catchUp(room) {', 'catchUp')).toBe(true);
    expect(holds('  catchUpAll(room) {', 'catchUp')).toBe(false);
    expect(holds('  this.#remove(w);', '#remove')).toBe(true);
    expect(holds('  remove(w);', '#remove')).toBe(false);
  });
});

describe('checkLinks', () => {
  describe('when a line link lands on its identifier', () => {
    it('should find nothing wrong', () => {
      expect(check('See [`Hub.catchUp`](hub.ts#L3) and [`#remove`](hub.ts#L4-L5).')).toEqual([]);
    });
  });

  describe('when the code moved under a line link', () => {
    it('should say which line does not hold the name, and where it is now', () => {
      expect(check('text\nSee [`Hub.catchUp`](hub.ts#L2).')).toEqual([
        {
          line: 2,
          link: '[`Hub.catchUp`](hub.ts#L2)',
          problem: 'line 2 of hub.ts does not hold `catchUp` (it is on line 3)',
        },
      ]);
    });

    it('should report a line past the end of the file', () => {
      expect(check('[`catchUp`](hub.ts#L99)')[0]?.problem).toBe('hub.ts has no line 99');
    });
  });

  describe('when a line link names no identifier', () => {
    it('should refuse it, since nothing could be checked', () => {
      expect(check('[hub.ts, line 3](hub.ts#L3)')[0]?.problem).toMatch(/must name the identifier/);
      expect(check('[`hub.ts#L3`](hub.ts#L3)')[0]?.problem).toMatch(/must name the identifier/);
    });
  });

  describe('when a link points at a file that is gone', () => {
    it('should report it, with or without a line', () => {
      expect(check('[`Hub`](gone.ts)')[0]?.problem).toBe('gone.ts does not exist');
      expect(check('[`Hub`](gone.ts#L1)')[0]?.problem).toBe('gone.ts does not exist');
    });
  });

  describe('links it leaves alone', () => {
    it('should skip web links, in-page anchors and code blocks', () => {
      expect(
        check(
          '[web](https://example.com/x.ts#L1) [up](#flaw-1)\n```md\n[`x`](gone.ts#L1)\n```\n[dir](docs)',
        ),
      ).toEqual([]);
    });
  });
});
