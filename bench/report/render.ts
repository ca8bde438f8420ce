/**
 * `npm run bench:report -- <results.json> [out.html]`: renders the HTML
 * report of a saved run again with the current report code, e.g. after the
 * report changed (`bench/results/sample.html` from `sample.json`). Writes
 * next to the JSON file by default.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { Results } from '../lib/context.ts';
import { renderHtml } from './html.ts';

const [input = '', output = input.replace(/\.json$/, '.html')] = process.argv.slice(2);
if (!input.endsWith('.json')) {
  process.stderr.write('usage: npm run bench:report -- bench/results/<run>.json [out.html]\n');
  process.exit(2);
}
const results = JSON.parse(readFileSync(input, 'utf8')) as Results;
writeFileSync(output, renderHtml(results));
process.stdout.write(`wrote ${output}\n`);
