/**
 * `npm run env:example`: writes `.env.example`'s second half, the chat's own
 * settings, from README.md's "Configuration" table (scripts/settings-table.ts);
 * with `--check` (in `npm run check:docs`), fails when the file differs, so
 * the example cannot drift from the documentation.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { readCli } from './cli.ts';
import { settingsTable, withSettings } from './settings-table.ts';

const { values } = readCli({
  usage: `usage: npm run env:example [-- --check]

Writes .env.example's settings from README.md's "Configuration" table.

  --check     write nothing; exit 1 when .env.example differs from the table
  -h, --help  this help`,
  options: { check: { type: 'boolean' } },
} as const);

const root = resolve(import.meta.dirname, '..');
const path = resolve(root, '.env.example');
const example = readFileSync(path, 'utf8');
const wanted = withSettings(
  example,
  settingsTable(readFileSync(resolve(root, 'README.md'), 'utf8')),
);
if (values.check) {
  if (wanted !== example) {
    process.stderr.write(
      '.env.example differs from README.md\'s "Configuration" table: run `npm run env:example`\n',
    );
    process.exit(1);
  }
  process.stdout.write('.env.example matches README.md\'s "Configuration" table\n');
} else {
  writeFileSync(path, wanted);
  process.stdout.write('.env.example written from README.md\'s "Configuration" table\n');
}
