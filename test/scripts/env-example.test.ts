/**
 * README.md's "Configuration" table and `.env.example` are written from the
 * table of settings (server/core/settings.ts) by `npm run env:example`, and
 * `npm run check:docs` fails when either differs from it.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  type SettingsTable,
  settingsDrift,
  settingsTable,
  writtenDocs,
} from '../../scripts/settings-table.ts';
import { settings } from '../../server/core/settings.ts';

const read = (path: string) => readFile(new URL(`../../${path}`, import.meta.url), 'utf8');
const docs = async () => ({
  readme: await read('README.md'),
  envExample: await read('.env.example'),
});

/** The table with one more setting, as a developer would add it. */
const withNewSetting: SettingsTable = [
  ...settingsTable,
  {
    ...settings.pollTimeoutMs,
    env: 'NEW_SETTING_MS',
    default: 42,
    shown: '`42`',
    doc: 'a setting nobody wrote down',
  },
];

describe('the settings', () => {
  it('name each variable once', () => {
    const names = settingsTable.map((s) => s.env);
    expect(new Set(names).size).toBe(names.length);
  });

  it("README.md's table and .env.example are what the table writes", async () => {
    expect(settingsDrift(await docs(), settingsTable)).toEqual([]);
  });

  it('.env.example names each setting once, at its default where the default is a value', async () => {
    const example = await read('.env.example');
    for (const { env, default: value } of settingsTable) {
      const lines = example.split('\n').filter((line) => line.startsWith(`#${env}=`));
      expect({ env, lines: lines.length }).toEqual({ env, lines: 1 });
      if (typeof value === 'number') expect(lines[0]).toBe(`#${env}=${value}`);
    }
  });

  describe('when a setting is added to the table and the docs are not written again', () => {
    it('finds README.md and .env.example out of date', async () => {
      expect(settingsDrift(await docs(), withNewSetting)).toEqual(['README.md', '.env.example']);
    });

    it('writes the new setting into both', async () => {
      const written = writtenDocs(await docs(), withNewSetting);
      expect(written.readme).toContain(
        '| `NEW_SETTING_MS` | `42` | 100–600000 | a setting nobody wrote down |',
      );
      expect(written.envExample).toContain('#NEW_SETTING_MS=42');
    });
  });

  describe('`npm run check:docs` (env-example.ts --check)', () => {
    /** Runs the check in a copy of the repository whose README.md was changed by `edit`. */
    async function check(
      edit: (readme: string) => string,
    ): Promise<{ code: number; stderr: string }> {
      const root = new URL('../../', import.meta.url).pathname;
      const copy = await mkdtemp(join(tmpdir(), 'settings-check-'));
      try {
        for (const path of ['scripts', 'server/core', '.env.example', 'package.json']) {
          await cp(join(root, path), join(copy, path), { recursive: true });
        }
        await writeFile(join(copy, 'README.md'), edit(await read('README.md')));
        const tsx = join(root, 'node_modules/.bin/tsx');
        return await promisify(execFile)(tsx, [join(copy, 'scripts/env-example.ts'), '--check'], {
          cwd: copy,
        }).then(
          () => ({ code: 0, stderr: '' }),
          (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
        );
      } finally {
        await rm(copy, { recursive: true, force: true });
      }
    }

    it('passes on the files as written', async () => {
      expect(await check((readme) => readme)).toEqual({ code: 0, stderr: '' });
    });

    it('fails when a row of the README differs from the table', async () => {
      const result = await check((readme) =>
        readme.replace('| `PORT` | `3000` |', '| `PORT` | `8080` |'),
      );
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('README.md differs');
    });
  });
});
