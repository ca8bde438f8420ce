/**
 * The documentation written from the table of settings
 * (server/core/settings.ts): README.md's "Configuration" table, between its
 * markers, and `.env.example`'s second half (the chat's own settings).
 * `scripts/env-example.ts` writes both or checks them, and
 * test/scripts/env-example.test.ts holds them to the table.
 */
import { type Setting, settings } from '../server/core/settings.ts';

/** The settings as the documentation lists them, in the table's order. */
export type SettingsTable = readonly Setting<unknown>[];
export const settingsTable: SettingsTable = Object.values(settings);

export const README_BEGIN =
  '<!-- settings: written from server/core/settings.ts by `npm run env:example`; edit them there -->';
const README_END = '<!-- end of the settings -->';
export const SETTINGS_BEGIN = "# --- The chat's own settings";
const SETTINGS_END = '# --- end of the chat settings ---';

/** A table cell: a `|` in the text would end it. */
const cell = (markdown: string): string => markdown.replaceAll('|', '\\|');

/** README.md's rows, between the markers. */
export function readmeSettings(table: SettingsTable): string {
  const rows = table.map(
    (s) => `| \`${s.env}\` | ${cell(s.shown)} | ${cell(s.values)} | ${cell(s.doc)} |`,
  );
  return [
    README_BEGIN,
    '| variable | default | values | meaning |',
    '|---|---|---|---|',
    ...rows,
    README_END,
  ].join('\n');
}

/** README.md with the rows between its markers written from `table`. */
export function withReadmeSettings(readme: string, table: SettingsTable): string {
  const start = readme.indexOf(README_BEGIN);
  const end = readme.indexOf(README_END);
  if (start === -1 || end < start) {
    throw new Error(`README.md has no "${README_BEGIN}" … "${README_END}" markers`);
  }
  return readme.slice(0, start) + readmeSettings(table) + readme.slice(end + README_END.length);
}

/** Markdown to plain text for a comment: no backticks, links as their text. */
function plain(markdown: string): string {
  return markdown
    .replace(/\[([^\]]+)\]\([^)]+\)/g, '$1')
    .replace(/`/g, '')
    .replace(/\*\*/g, '')
    .trim();
}

/** Words folded into `# ` comment lines of at most `width` characters. */
function comment(text: string, width = 78): string[] {
  const lines: string[] = [];
  let line = '#';
  for (const word of text.split(/\s+/)) {
    if (line.length + 1 + word.length > width && line !== '#') {
      lines.push(line);
      line = '#';
    }
    line += ` ${word}`;
  }
  lines.push(line);
  return lines;
}

/** A default the example can write as a value, or undefined (`unset`, `all interfaces`…). */
function literal(value: string): string | undefined {
  return /^[A-Za-z0-9:_./-]+$/.test(value) &&
    !/^(unset|none|any|unlimited)$/.test(value) &&
    !/^[A-Z_]+$/.test(value)
    ? value
    : undefined;
}

/** The block between the markers: each setting commented out at its default. */
export function envExampleSettings(table: SettingsTable): string {
  const out = [
    `${SETTINGS_BEGIN} (written from server/core/settings.ts by \`npm run env:example\`) ---`,
    '# For `npm start` (`set -a; . ./.env; set +a` first), systemd',
    "# (EnvironmentFile=) or the compose app service's `environment:`. Each line",
    '# is commented out at its default: uncomment it to change it.',
  ];
  for (const setting of table) {
    const values = plain(setting.values);
    out.push('');
    out.push(...comment(values === '' ? plain(setting.doc) : `${plain(setting.doc)} (${values})`));
    const shown = plain(setting.shown);
    const value = literal(shown);
    out.push(
      value === undefined ? `#${setting.env}=    # default: ${shown}` : `#${setting.env}=${value}`,
    );
  }
  out.push(SETTINGS_END);
  return `${out.join('\n')}\n`;
}

/** `.env.example` with its settings block replaced (or appended). */
export function withSettings(example: string, table: SettingsTable): string {
  const start = example.indexOf(SETTINGS_BEGIN);
  const head = start === -1 ? `${example.trimEnd()}\n\n` : example.slice(0, start);
  return head + envExampleSettings(table);
}

/** The documentation files as `table` writes them. */
export interface SettingsDocs {
  readme: string;
  envExample: string;
}

/** `docs` as `table` writes them. */
export function writtenDocs(docs: SettingsDocs, table: SettingsTable): SettingsDocs {
  return {
    readme: withReadmeSettings(docs.readme, table),
    envExample: withSettings(docs.envExample, table),
  };
}

/** The files among `docs` that differ from what `table` writes: empty when all match. */
export function settingsDrift(docs: SettingsDocs, table: SettingsTable): string[] {
  const wanted = writtenDocs(docs, table);
  return [
    ...(wanted.readme === docs.readme ? [] : ['README.md']),
    ...(wanted.envExample === docs.envExample ? [] : ['.env.example']),
  ];
}
