/**
 * `npm run env:example` (also `npm run settings:docs`): writes README.md's
 * "Configuration" table and `.env.example`'s second half, the chat's own
 * settings, from the table of settings (server/core/settings.ts, through
 * scripts/settings-table.ts); with `--check` (in `npm run check:docs`),
 * fails when either differs, so the documentation cannot drift from the code.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { readCli } from './cli.ts';
import { settingsDrift, settingsTable, writtenDocs } from './settings-table.ts';

const { values } = readCli({
  usage: `usage: npm run env:example [-- --check]

Writes README.md's "Configuration" table and .env.example's settings from
server/core/settings.ts.

  --check     write nothing; exit 1 when either file differs from the table
  -h, --help  this help`,
  options: { check: { type: 'boolean' } },
} as const);

const root = resolve(import.meta.dirname, '..');
const paths = { readme: resolve(root, 'README.md'), envExample: resolve(root, '.env.example') };
const docs = {
  readme: readFileSync(paths.readme, 'utf8'),
  envExample: readFileSync(paths.envExample, 'utf8'),
};
if (values.check) {
  const drift = settingsDrift(docs, settingsTable);
  if (drift.length > 0) {
    process.stderr.write(
      `${drift.join(' and ')} ${drift.length === 1 ? 'differs' : 'differ'} from server/core/settings.ts: run \`npm run env:example\`\n`,
    );
    process.exit(1);
  }
  process.stdout.write('README.md and .env.example match server/core/settings.ts\n');
} else {
  const wanted = writtenDocs(docs, settingsTable);
  writeFileSync(paths.readme, wanted.readme);
  writeFileSync(paths.envExample, wanted.envExample);
  process.stdout.write('README.md and .env.example written from server/core/settings.ts\n');
}
