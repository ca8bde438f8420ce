/**
 * `.env.example` names every setting of the chat with its default, written
 * from README.md's "Configuration" table (scripts/env-example.ts), and that
 * table names exactly the variables server/core/config.ts reads.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { settingsTable, withSettings } from '../../scripts/settings-table.ts';

const read = (path: string) => readFile(new URL(`../../${path}`, import.meta.url), 'utf8');

/** The variable names config.ts reads: `read('X')`, `int('X', …)`, `bool('X', …)`. */
async function configNames(): Promise<string[]> {
  const source = await read('server/core/config.ts');
  const body = source.slice(source.indexOf('export function loadConfig'));
  return [...new Set([...body.matchAll(/\b(?:read|int|bool)\(\s*'([A-Z_]+)'/g)].map((m) => m[1]!))];
}

describe('the settings', () => {
  it('README.md\'s "Configuration" table names exactly what config.ts reads', async () => {
    const table = settingsTable(await read('README.md')).map((s) => s.name);
    expect(new Set(table).size).toBe(table.length);
    expect([...table].sort()).toEqual((await configNames()).sort());
  });

  it('.env.example is what the table writes', async () => {
    const example = await read('.env.example');
    expect(withSettings(example, settingsTable(await read('README.md')))).toBe(example);
  });

  it('.env.example names each setting once, at its default where the default is a value', async () => {
    const example = await read('.env.example');
    const settings = settingsTable(await read('README.md'));
    for (const { name, default: value } of settings) {
      const lines = example.split('\n').filter((line) => line.startsWith(`#${name}=`));
      expect({ name, lines: lines.length }).toEqual({ name, lines: 1 });
      if (/^\d+$/.test(value)) expect(lines[0]).toBe(`#${name}=${value}`);
    }
  });

  describe('when a setting is added to the table and not to .env.example', () => {
    it('gives another .env.example, so `npm run check:docs` fails', async () => {
      const readme = await read('README.md');
      const example = await read('.env.example');
      const added = readme.replace(
        '| `PORT` |',
        '| `NEW_SETTING_MS` | `42` | a setting nobody wrote down |\n| `PORT` |',
      );
      const wanted = withSettings(example, settingsTable(added));
      expect(wanted).not.toBe(example);
      expect(wanted).toContain('#NEW_SETTING_MS=42');
    });
  });
});
