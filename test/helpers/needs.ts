/**
 * The one way a suite says what it needs and is skipped without it: with the
 * reason printed, and never in CI for what CI provides (`.ci/run` installs
 * and starts it), where a missing need fails the run instead of passing it
 * silently.
 *
 * ```ts
 * describeWith(needs.service('REDIS_URL'), 'RedisBus', () => { … });
 * describeWith(needs.command('nginx'), 'a real nginx in front', () => { … });
 * ```
 */
import { execFileSync } from 'node:child_process';
import { describe, it } from 'vitest';
import { ciRequired, serviceUrl } from './env.ts';

export interface Need {
  /** What is missing, as the skip reason says it. */
  what: string;
  available: boolean;
  /** CI provides it: missing there is a failure. */
  requiredInCi: boolean;
}

export const needs = {
  /** A server whose URL the environment gives (MYSQL_URL, REDIS_URL, MONGODB_URL). */
  service(name: 'MYSQL_URL' | 'REDIS_URL' | 'MONGODB_URL'): Need {
    return {
      what: `${name} (a real server; ${ciRequired.has(name) ? '.ci/run starts one' : 'docker-compose starts one'})`,
      available: serviceUrl(name) !== undefined,
      requiredInCi: ciRequired.has(name),
    };
  },
  /** A command on the PATH (or at an absolute path), which `.ci/run` installs. */
  command(name: string, requiredInCi = true): Need {
    return { what: `the ${name} command`, available: hasCommand(name), requiredInCi };
  },
};

/** `describe(title, body)` when `need` is met; otherwise one skipped test that says why. */
export function describeWith(need: Need, title: string, body: () => void): void {
  if (need.available) {
    describe(title, () => body());
    return;
  }
  if (process.env.CI && need.requiredInCi) {
    throw new Error(`${title}: needs ${need.what}, which CI must provide`);
  }
  process.stderr.write(`skipped "${title}": needs ${need.what}\n`);
  describe(title, () => {
    it.skip(`needs ${need.what}`, () => {});
  });
}

export function hasCommand(name: string): boolean {
  return commandPath(name) !== undefined;
}

/** Where the shell finds a command (`command -v`), or undefined when it does not. */
export function commandPath(name: string): string | undefined {
  try {
    const found = execFileSync('sh', ['-c', `command -v "$0"`, name], { encoding: 'utf8' });
    return found.trim() || undefined;
  } catch {
    return undefined;
  }
}
