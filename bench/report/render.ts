/**
 * `npm run bench:report -- <results.json> [out.html]`: renders the HTML
 * report of a saved run again with the current report code, e.g. after the
 * report changed (`bench/results/sample.html` from `sample.json`). Writes
 * next to the JSON file by default.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { readCli, usageError } from '../../scripts/cli.ts';
import type { Results } from '../lib/context.ts';
import { renderHtml } from './html.ts';

const cli = {
  usage: `usage: npm run bench:report -- bench/results/<run>.json [out.html]

Renders the HTML report of a saved run again, next to the JSON by default.

  -h, --help     this help`,
  options: {},
  positionals: { max: 2 },
};
const { positionals } = readCli(cli);
const [input = '', output = input.replace(/\.json$/, '.html')] = positionals;
if (!input.endsWith('.json')) usageError(cli, 'the first argument must be a results .json file');
const results = JSON.parse(readFileSync(input, 'utf8')) as Results;
writeFileSync(output, renderHtml(results));
process.stdout.write(`wrote ${output}\n`);
