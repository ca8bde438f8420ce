/**
 * Reads deploy/linux/chat.service and chat.env the way systemd does, for the
 * little the tests need: the settings of each section, and the environment
 * the chat gets (Environment= lines, then the EnvironmentFile, which wins).
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export const UNIT_FILE = fileURLToPath(new URL('../../deploy/linux/chat.service', import.meta.url));
export const ENV_FILE = fileURLToPath(new URL('../../deploy/linux/chat.env', import.meta.url));

export interface Unit {
  /** Every value of `key` in `[section]`, in order. */
  all(section: string, key: string): string[];
  /** The last value of `key` in `[section]` (systemd: the last one wins), or undefined. */
  get(section: string, key: string): string | undefined;
  /** The Environment= assignments of [Service]. */
  environment(): Record<string, string>;
}

export async function readUnit(path = UNIT_FILE): Promise<Unit> {
  const settings: { section: string; key: string; value: string }[] = [];
  let section = '';
  for (const raw of (await readFile(path, 'utf8')).split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1]!;
      continue;
    }
    const eq = line.indexOf('=');
    if (eq < 0) throw new Error(`${path}: not a setting: ${line}`);
    settings.push({ section, key: line.slice(0, eq).trim(), value: line.slice(eq + 1).trim() });
  }
  const all = (s: string, key: string) =>
    settings.filter((setting) => setting.section === s && setting.key === key).map((x) => x.value);
  return {
    all,
    get: (s, key) => all(s, key).at(-1),
    environment() {
      const env: Record<string, string> = {};
      for (const assignment of all('Service', 'Environment')) {
        // One NAME=value per line, unquoted: what this unit uses, and what we can read without systemd's quoting rules.
        if (/["'\s]/.test(assignment))
          throw new Error(`quote-free Environment= expected: ${assignment}`);
        const eq = assignment.indexOf('=');
        env[assignment.slice(0, eq)] = assignment.slice(eq + 1);
      }
      return env;
    },
  };
}

/** An EnvironmentFile: NAME=value lines, # comments. */
export async function readEnvFile(path = ENV_FILE): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const raw of (await readFile(path, 'utf8')).split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq < 1) throw new Error(`${path}: not NAME=value: ${line}`);
    env[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return env;
}
