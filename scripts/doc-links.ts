/**
 * The rules `npm run check:docs` holds the documentation's links to, as
 * pure functions (tested in test/scripts/doc-links.test.ts).
 *
 * - A relative link must point at a file or folder that exists.
 * - A link to lines of a file (`file.ts#L42`, `file.ts#L42-L50`) must name,
 *   in a code span, the identifier it promises (`[`Hub.catchUp`](…#L131)`),
 *   and that line (the first of a range) must hold it. Code moves; a line
 *   number does not follow it. This turns "the link now points at the wrong
 *   line" into a failing check instead of a reader's confusion.
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

/** The identifier a link's text names: `Hub.catchUp` → `catchUp`, `#armTimer` → `#armTimer`, `answer()` → `answer`. */
export function namedIdentifier(text: string): string | undefined {
  const code = /`([^`]+)`/.exec(text)?.[1];
  // A file name (`recv.ts`) names no identifier: any line of the file would do.
  if (code === undefined || /\.(?:[cm]?[jt]sx?|json|md|html|css)$|\//.test(code)) return undefined;
  const name = code.split('(')[0]!.trim().split('.').at(-1)!;
  return /^#?[A-Za-z_$][\w$]*$/.test(name) ? name : undefined;
}

/** Whether `line` holds `name` as a whole word. */
export function holds(line: string, name: string): boolean {
  const escaped = name.replace(/[$#]/g, (c) => `\\${c}`);
  return new RegExp(`(?<![\\w$#])${escaped}(?![\\w$])`).test(line);
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
  const lines = fragment === undefined ? undefined : /^L(\d+)(?:-L(\d+))?$/.exec(fragment);
  if (!lines) return undefined;
  const name = namedIdentifier(label);
  if (name === undefined) {
    return `a link to #${fragment} must name the identifier it points at in a code span, e.g. [\`answer\`](${target})`;
  }
  const text = files.read(file)?.split('\n');
  const first = Number(lines[1]);
  const line = text?.[first - 1];
  if (line === undefined) return `${path} has no line ${first}`;
  if (!holds(line, name)) {
    const found = text!.flatMap((l, i) => (holds(l, name) ? [i + 1] : []));
    const hint = found.length > 0 ? ` (it is on line ${found.slice(0, 3).join(', ')})` : '';
    return `line ${first} of ${path} does not hold \`${name}\`${hint}`;
  }
  return undefined;
}
