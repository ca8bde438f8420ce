/** scripts/doc-links.ts: the rules `npm run check:docs` holds README.md and docs/*.md to. */
import { describe, expect, it } from 'vitest';
import {
  checkLinks,
  declares,
  type Files,
  findSymbol,
  namedSymbol,
} from '../../scripts/doc-links.ts';

const code = [
  '/** The hub: catchUp is described here, not declared. */',
  'export class Hub {',
  '  catchUp(room) {',
  "    const brace = '}';",
  '  }',
  '  #remove(w) {',
  '  }',
  '}',
  'export function answer(list) {}',
  'function remove() {}',
].join('\n');
const files: Files = {
  exists: (path) => ['hub.ts', 'docs', 'notes.md'].includes(path),
  read: (path) => (path === 'hub.ts' ? code : path === 'notes.md' ? 'no code' : undefined),
};
const check = (markdown: string) => checkLinks(markdown, (target) => target, files);

describe('namedSymbol', () => {
  it('should take the dotted parts, and drop a call', () => {
    expect(namedSymbol('[`Hub.catchUp`]')).toEqual(['Hub', 'catchUp']);
    expect(namedSymbol('`answer()`')).toEqual(['answer']);
    expect(namedSymbol('`#remove`')).toEqual(['#remove']);
  });

  it('should see no symbol in plain words or a file name', () => {
    expect(namedSymbol('the hub')).toBeUndefined();
    expect(namedSymbol('`recv.ts`')).toBeUndefined();
    expect(namedSymbol('`server/hub/`')).toBeUndefined();
  });
});

describe('declares', () => {
  it('should see declarations', () => {
    expect(declares('export class Hub {', 'Hub')).toBe(true);
    expect(declares('  catchUp(room) {', 'catchUp')).toBe(true);
    expect(declares('  async append(input: NewMessage): Promise<X> {', 'append')).toBe(true);
    expect(declares('  onReset?(head: number): Promise<void>;', 'onReset')).toBe(true);
    expect(declares('  pollTimeoutMs: number;', 'pollTimeoutMs')).toBe(true);
    expect(declares('const POLL_TIMEOUT_MS = Number(x);', 'POLL_TIMEOUT_MS')).toBe(true);
    expect(declares('type Waiter = { res: Response };', 'Waiter')).toBe(true);
    expect(declares('  #remove(w) {', '#remove')).toBe(true);
  });

  it('should not take a use or a longer name for a declaration', () => {
    expect(declares('    this.catchUp(room);', 'catchUp')).toBe(false);
    expect(declares('  catchUpAll(room) {', 'catchUp')).toBe(false);
    expect(declares('  remove(w) {', '#remove')).toBe(false);
    expect(declares(' * the hub calls catchUp(room) first', 'catchUp')).toBe(false);
  });
});

describe('findSymbol', () => {
  it('should find a member inside its class only', () => {
    expect(findSymbol(code, ['Hub', 'catchUp'])).toBe(3);
    expect(findSymbol(code, ['Hub', '#remove'])).toBe(6);
    expect(findSymbol(code, ['Hub', 'answer'])).toBeUndefined();
    expect(findSymbol(code, ['answer'])).toBe(9);
  });
});

describe('checkLinks', () => {
  describe('when a link names a symbol its file declares', () => {
    it('should find nothing wrong', () => {
      expect(
        check('See [`Hub.catchUp`](hub.ts), [`#remove`](hub.ts), [`answer`](hub.ts).'),
      ).toEqual([]);
    });
  });

  describe('when the file does not declare the symbol', () => {
    it('should say so', () => {
      expect(check('text\nSee [`Hub.gone`](hub.ts).')).toEqual([
        { line: 2, link: '[`Hub.gone`](hub.ts)', problem: 'hub.ts declares no `Hub.gone`' },
      ]);
    });

    it('should say where a member is when it is outside the named class', () => {
      expect(check('[`Hub.answer`](hub.ts)')[0]?.problem).toBe(
        'hub.ts declares no `Hub.answer` (`answer` is, outside `Hub`)',
      );
    });
  });

  describe('when a link points at a line', () => {
    it('should refuse it, and say how to name the symbol instead', () => {
      expect(check('[`Hub.catchUp`](hub.ts#L3)')[0]?.problem).toBe(
        'a link names a symbol, not a line: [`Hub.catchUp`](hub.ts), without #L3',
      );
      expect(check('[hub.ts, line 3](hub.ts#L3-L5)')[0]?.problem).toMatch(/not a line/);
    });
  });

  describe('when a link points at a file that is gone', () => {
    it('should report it', () => {
      expect(check('[`Hub`](gone.ts)')[0]?.problem).toBe('gone.ts does not exist');
      expect(check('[`Hub`](gone.ts#L1)')[0]?.problem).toBe('gone.ts does not exist');
    });
  });

  describe('links it leaves alone', () => {
    it('should skip web links, in-page anchors, code blocks, file names and prose files', () => {
      expect(
        check(
          '[web](https://example.com/x.ts#L1) [up](#flaw-1)\n```md\n[`x`](gone.ts#L1)\n```\n[dir](docs)\n' +
            '[`hub.ts`](hub.ts) [the hub](hub.ts) [`Anything`](notes.md)',
        ),
      ).toEqual([]);
    });
  });
});
