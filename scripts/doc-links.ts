/**
 * The rules `npm run check:docs` holds the documentation's links to, as
 * pure functions (tested in test/scripts/doc-links.test.ts).
 *
 * - A relative link must point at a file or folder that exists.
 * - A link into the code names a symbol, never a line: the link's text is a
 *   code span with the symbol (`[`createRecvHandler`](../server/http/recv.ts)`,
 *   `[`MessageLog.accept`](…/message-log.ts)`), and the source file it points
 *   at must declare it (a function, class, interface, type, variable,
 *   method or property; `A.b` is `b` declared inside `A`'s block). Code
 *   moves and line numbers do not follow it, so a link to a line (`#L42`) is
 *   refused: it broke with every edit above it, and fixing them took commits
 *   of their own.
 */

export interface LinkProblem {
  /** 1-based line of the link in the Markdown file. */
  line: number;
  link: string;
  problem: string;
}

export interface Files {
  /** The file's text, or undefined when there is no such file. */
  read(path: string): string | undefined;
  exists(path: string): boolean;
}

const LINK = /\[((?:[^\]`]|`[^`]*`)+)\]\(([^)\s]+)\)/g;
/** Files whose symbols a link may name. */
const SOURCE = /\.(?:[cm]?[jt]sx?)$/;

/**
 * The symbol a link's text names, as its dotted parts: `Hub.catchUp` →
 * [`Hub`, `catchUp`], `#armTimer` → [`#armTimer`], `answer()` → [`answer`].
 * Undefined for plain words and for a file or folder name (`recv.ts`).
 */
export function namedSymbol(text: string): string[] | undefined {
  const code = /`([^`]+)`/.exec(text)?.[1];
  if (code === undefined || /\.(?:[cm]?[jt]sx?|json|md|html|css)$|\//.test(code)) return undefined;
  const parts = code.split('(')[0]!.trim().split('.');
  return parts.every((part) => /^#?[A-Za-z_$][\w$]*$/.test(part)) ? parts : undefined;
}

const escapeName = (name: string) => name.replace(/[$#]/g, (c) => `\\${c}`);

/** Whether `line` declares `name`: `function name`, `class name`, `const name =`, `  name(…) {`, `  name: T`, … */
export function declares(line: string, name: string): boolean {
  const n = escapeName(name);
  const keyword = new RegExp(
    `(?:^|[^\\w$#.])(?:function\\*?|class|interface|type|enum|const|let|var|namespace)\\s+${n}(?![\\w$])`,
  );
  const member = new RegExp(
    `^\\s*(?:export\\s+)?(?:(?:public|private|protected|static|readonly|async|get|set|override|declare|abstract)\\s+)*\\*?${n}\\??\\s*[(<:=]`,
  );
  return keyword.test(line) || member.test(line);
}

/**
 * The 1-based line that declares the symbol in `source`, or undefined. For
 * `A.b`, `b` must be declared after `A`'s declaration and before the brace
 * that closes `A`'s block.
 */
export function findSymbol(source: string, parts: string[]): number | undefined {
  const lines = source.split('\n');
  let from = 0;
  let to = lines.length;
  let found: number | undefined;
  for (const part of parts) {
    found = undefined;
    for (let i = from; i < to; i += 1) {
      if (declares(lines[i]!, part)) {
        found = i;
        break;
      }
    }
    if (found === undefined) return undefined;
    from = found + 1;
    to = endOfBlock(lines, found);
  }
  return found === undefined ? undefined : found + 1;
}

/** The index past the line where the block opened on line `start` closes (by counting braces). */
function endOfBlock(lines: string[], start: number): number {
  let depth = 0;
  let opened = false;
  for (let i = start; i < lines.length; i += 1) {
    for (const c of lines[i]!.replace(/(["'`])(?:\\.|(?!\1).)*\1|\/\/.*$/g, '')) {
      if (c === '{') {
        depth += 1;
        opened = true;
      } else if (c === '}') depth -= 1;
    }
    if (opened && depth <= 0) return i + 1;
  }
  return lines.length;
}

/**
 * Every problem with the links of one Markdown file. `resolve` turns a
 * link's path into a path `files` understands (relative to the Markdown file).
 */
export function checkLinks(
  markdown: string,
  resolve: (target: string) => string,
  files: Files,
): LinkProblem[] {
  const problems: LinkProblem[] = [];
  let fenced = false;
  for (const [index, text] of markdown.split('\n').entries()) {
    if (/^\s*(```|~~~)/.test(text)) fenced = !fenced;
    if (fenced) continue;
    for (const [link, label, target] of text.matchAll(LINK)) {
      const problem = checkLink(label!, target!, resolve, files);
      if (problem) problems.push({ line: index + 1, link, problem });
    }
  }
  return problems;
}

function checkLink(
  label: string,
  target: string,
  resolve: (target: string) => string,
  files: Files,
): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) return undefined;
  const [path, fragment] = target.split('#', 2) as [string, string | undefined];
  const file = resolve(decodeURIComponent(path));
  if (!files.exists(file)) return `${path} does not exist`;
  const symbol = namedSymbol(label);
  if (fragment !== undefined && /^L\d+(?:-L\d+)?$/.test(fragment)) {
    const named = symbol ? `[\`${symbol.join('.')}\`](${path})` : `[\`name\`](${path})`;
    return `a link names a symbol, not a line: ${named}, without #${fragment}`;
  }
  if (symbol === undefined || !SOURCE.test(path)) return undefined;
  const source = files.read(file);
  if (source === undefined || findSymbol(source, symbol) !== undefined) return undefined;
  const last = symbol.at(-1)!;
  const elsewhere = symbol.length > 1 && findSymbol(source, [last]) !== undefined;
  const hint = elsewhere ? ` (\`${last}\` is, outside \`${symbol[0]}\`)` : '';
  return `${path} declares no \`${symbol.join('.')}\`${hint}`;
}
