/**
 * The Mermaid diagrams of README.md and docs/*.md, rendered the way GitHub
 * renders them: by Mermaid in a browser (the version in node_modules, in
 * headless Chromium). Every diagram must render, and in a sequence diagram
 * every arrow's and note's label must show in full: Mermaid reads `#` as the
 * start of a comment and `;` as the end of a statement, and silently drops
 * what follows (an arrow once showed `200 {"messages":[` and nothing more).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, test } from '@playwright/test';

const root = resolve(import.meta.dirname, '..');
const MERMAID = resolve(root, 'node_modules/mermaid/dist/mermaid.min.js');
const documents = [
  'README.md',
  ...readdirSync(resolve(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

interface Diagram {
  where: string;
  source: string;
}

function diagrams(): Diagram[] {
  const found: Diagram[] = [];
  for (const document of documents) {
    const text = readFileSync(resolve(root, document), 'utf8');
    for (const match of text.matchAll(/^```mermaid\n([\s\S]*?)^```$/gm)) {
      const line = text.slice(0, match.index).split('\n').length;
      found.push({ where: `${document}:${line}`, source: match[1]! });
    }
  }
  return found;
}

/** The labels a sequence diagram must show: after the colon of each message and note. */
function sequenceLabels(source: string): string[] {
  if (!/^\s*sequenceDiagram\b/.test(source)) return [];
  return source
    .split('\n')
    .map(
      (line) =>
        /^\s*(?:[\w ]+?(?:->>|-->>|->|-->|-x|--x|-\)|--\))[\w ]+|Note (?:over|left of|right of) [\w, ]+):\s*(.*)$/.exec(
          line,
        )?.[1],
    )
    .filter((label): label is string => label !== undefined)
    .map((label) => label.trim());
}

test.describe('the diagrams of the documentation', () => {
  const all = diagrams();

  test('the guide has its sequence diagram', () => {
    expect(all.some((diagram) => diagram.where.startsWith('docs/long-polling.md'))).toBe(true);
  });

  for (const { where, source } of all) {
    test(`${where} renders with every label in full`, async ({ page }) => {
      await page.setContent('<!doctype html><html><body><div id="out"></div></body></html>');
      await page.addScriptTag({ path: MERMAID });
      const texts = await page.evaluate(async (text) => {
        const mermaid = (window as unknown as { mermaid: MermaidApi }).mermaid;
        mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });
        const { svg } = await mermaid.render('diagram', text);
        const out = document.getElementById('out')!;
        out.innerHTML = svg;
        return [...out.querySelectorAll('svg text')].map((node) => node.textContent ?? '');
      }, source);
      const labels = sequenceLabels(source);
      if (/^\s*sequenceDiagram\b/.test(source)) expect(labels.length).toBeGreaterThan(3);
      for (const label of labels) {
        expect(texts, `the label "${label}"`).toContain(label);
      }
    });
  }
});

interface MermaidApi {
  initialize(config: object): void;
  render(id: string, text: string): Promise<{ svg: string }>;
}
