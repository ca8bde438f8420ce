/**
 * `npm run check:docs`: every relative link in README.md and docs/*.md must
 * point at a file that exists, and every link into the code must name a
 * symbol that its file declares, never a line number (scripts/doc-links.ts).
 * Prints each broken link with where the identifier is now; exits 1 if any.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { checkLinks } from './doc-links.ts';

const root = resolve(import.meta.dirname, '..');
const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

const files = {
  exists: (path: string) => existsSync(path),
  read: (path: string) => (existsSync(path) ? readFileSync(path, 'utf8') : undefined),
};

let broken = 0;
let checked = 0;
for (const document of documents) {
  const path = join(root, document);
  const markdown = readFileSync(path, 'utf8');
  checked += [...markdown.matchAll(/\]\((?![a-z]+:)[^)#\s][^)\s]*\)/g)].length;
  for (const { line, link, problem } of checkLinks(
    markdown,
    (target) => resolve(dirname(path), target),
    files,
  )) {
    broken += 1;
    process.stderr.write(`${document}:${line}: ${link}\n    ${problem}\n`);
  }
}
const where = relative(process.cwd(), root) || '.';
if (broken > 0) {
  process.stderr.write(`\n${broken} broken documentation link(s) in ${where}\n`);
  process.exitCode = 1;
} else {
  process.stdout.write(`${checked} relative links in ${documents.length} documents: all good\n`);
}
