/**
 * The README's "Configuration" table, the one list of every setting with
 * its default, read into rows, and `.env.example`'s second half (the chat's
 * own settings) written from them: `scripts/env-example.ts` writes or
 * checks the file, and test/scripts/env-example.test.ts also holds the
 * table to the names server/core/config.ts reads.
 */

export interface Setting {
  name: string;
  /** As the README writes it: `3000`, `unset`, `all interfaces`… */
  default: string;
  meaning: string;
}

export const SETTINGS_BEGIN = "# --- The chat's own settings";
const SETTINGS_END = '# --- end of the chat settings ---';

/** The rows of the README's "Configuration" table, a row `A` / `B` giving two settings. */
export function settingsTable(readme: string): Setting[] {
  const section = /^## Configuration\n([\s\S]*?)^## /m.exec(readme)?.[1];
  if (section === undefined) throw new Error('README.md has no "## Configuration" section');
  const settings: Setting[] = [];
  for (const line of section.split('\n')) {
    const cells = /^\| (`[A-Z_]+`(?: \/ `[A-Z_]+`)*) \| (.+?) \| (.+) \|$/.exec(line);
    if (!cells) continue;
    const names = [...cells[1]!.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]!);
    const values = cells[2]!.split(' / ');
    names.forEach((name, i) => {
      settings.push({
        name,
        default: plain(values.length === names.length ? values[i]! : cells[2]!),
        meaning: plain(cells[3]!),
      });
    });
  }
  return settings;
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
export function envExampleSettings(settings: Setting[]): string {
  const out = [
    `${SETTINGS_BEGIN} (written from README.md, "Configuration", by \`npm run env:example\`) ---`,
    '# For `npm start` (`set -a; . ./.env; set +a` first), systemd',
    "# (EnvironmentFile=) or the compose app service's `environment:`. Each line",
    '# is commented out at its default: uncomment it to change it.',
  ];
  for (const setting of settings) {
    out.push('');
    out.push(...comment(setting.meaning));
    const value = literal(setting.default);
    out.push(
      value === undefined
        ? `#${setting.name}=    # default: ${setting.default}`
        : `#${setting.name}=${value}`,
    );
  }
  out.push(SETTINGS_END);
  return `${out.join('\n')}\n`;
}

/** `.env.example` with its settings block replaced (or appended). */
export function withSettings(example: string, settings: Setting[]): string {
  const start = example.indexOf(SETTINGS_BEGIN);
  const head = start === -1 ? `${example.trimEnd()}\n\n` : example.slice(0, start);
  return head + envExampleSettings(settings);
}
