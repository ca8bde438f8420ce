/**
 * scripts/cli.ts, and every script of bench/ and scripts/ that reads flags:
 * each answers `--help` at once (before any build or server) and refuses a
 * flag it does not know, run as a user runs it.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { integer, parseCli, UsageError } from '../../scripts/cli.ts';
import { ROOT } from '../helpers/build.ts';

const cli = {
  usage: 'usage: x [--quick] [--rounds=N]',
  options: { quick: { type: 'boolean' }, rounds: { type: 'string' } },
} as const;

describe('parseCli', () => {
  it('should read the flags it knows', () => {
    expect(parseCli(cli, ['--quick', '--rounds=3'])).toEqual({
      help: false,
      values: { quick: true, rounds: '3' },
      positionals: [],
    });
  });

  it('should see --help and -h', () => {
    expect(parseCli(cli, ['--help'])).toEqual({ help: true });
    expect(parseCli(cli, ['-h', '--quick'])).toEqual({ help: true });
  });

  it('should refuse an unknown flag, a flag without its value, and a stray argument', () => {
    expect(() => parseCli(cli, ['--qiuck'])).toThrow(UsageError);
    expect(() => parseCli(cli, ['--rounds'])).toThrow(UsageError);
    expect(() => parseCli(cli, ['quick'])).toThrow(UsageError);
  });

  it('should take as many positionals as allowed, and no more', () => {
    const two = { ...cli, positionals: { max: 2 } };
    expect(parseCli(two, ['a', 'b'])).toMatchObject({ positionals: ['a', 'b'] });
    expect(() => parseCli(two, ['a', 'b', 'c'])).toThrow('unexpected argument "c"');
  });
});

describe('integer', () => {
  it('should read an integer in range, and the fallback when absent', () => {
    expect(integer('3', 'rounds', 1, { min: 1 })).toBe(3);
    expect(integer(undefined, 'rounds', 1)).toBe(1);
  });

  it('should refuse what is not a whole number in range, instead of reading NaN', () => {
    for (const raw of ['abc', '1.5', '-1', '', '0x10']) {
      expect(() => integer(raw, 'rounds', 1), raw).toThrow(UsageError);
    }
    expect(() => integer('0', 'rounds', 1, { min: 1 })).toThrow(
      '--rounds must be an integer of at least 1, got "0"',
    );
    expect(() => integer('9', 'top', 1, { min: 1, max: 5 })).toThrow('from 1 to 5');
  });
});

/** Every .ts and .mjs file under `dir`, relative to the project. */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.(?:ts|mjs)$/.test(name))
    .map((name) => relative(ROOT, join(ROOT, dir, name)));
}

const files = [...sources('bench'), ...sources('scripts')];
const scripts = files.filter(
  (file) =>
    file !== 'scripts/cli.ts' && readFileSync(join(ROOT, file), 'utf8').includes('readCli('),
);

describe('the scripts of bench/ and scripts/', () => {
  it('should read the command line only through readCli', () => {
    const byHand = files.filter(
      (file) =>
        file !== 'scripts/cli.ts' &&
        // Its own path only, to know it is the main module.
        file !== 'scripts/build-if-stale.mjs' &&
        /process\.argv/.test(readFileSync(join(ROOT, file), 'utf8')),
    );
    expect(byHand).toEqual([]);
    expect(scripts.length).toBeGreaterThanOrEqual(8);
  });

  // Node with tsx's loader, as `tsx FILE` runs it, minus the tsx command's own
  // process in front (it only starts this one and relays its signals); the
  // npm script below runs the whole way once.
  const run = (file: string, args: string[]) =>
    promisify(execFile)(process.execPath, ['--import', 'tsx', file, ...args], { cwd: ROOT }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );

  for (const file of scripts) {
    describe(file, () => {
      it('should print its usage for --help, and do nothing else', async () => {
        const { code, stdout, stderr } = await run(file, ['--help']);
        expect(code, stderr).toBe(0);
        expect(stdout).toMatch(/^usage: /);
        expect(stdout).toContain('--help');
        expect(stderr).toBe('');
      });

      it('should refuse a flag it does not know, with its usage', async () => {
        const { code, stdout, stderr } = await run(file, ['--no-such-flag']);
        expect(code).toBe(2);
        expect(stderr).toMatch(/no-such-flag[\s\S]*\n\nusage: /);
        expect(stdout).toBe('');
      });
    });
  }
});

describe('npm run bench -- --help', () => {
  it('should answer before any build', async () => {
    const { stdout, stderr } = await promisify(execFile)(
      'npm',
      ['run', '--silent', 'bench', '--', '--help'],
      { cwd: ROOT },
    );
    expect(stdout).toMatch(/^usage: npm run bench/);
    expect(stdout).not.toMatch(/vite|built in/);
    expect(stderr).toBe('');
  });
});
