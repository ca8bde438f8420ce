/**
 * How every command-line script of bench/ and scripts/ reads its flags:
 * `node:util` parseArgs in strict mode, so an unknown flag or a flag without
 * its value stops the script with its usage instead of being ignored, and
 * `--help` prints the usage and exits before the script does anything else
 * (no build, no server). Numbers are checked too: `--rounds=abc` is refused,
 * not read as NaN.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

export interface Cli<O extends Options> {
  /** The whole help text: the command line, then one line per flag. */
  usage: string;
  options: O;
  /** Positional arguments the script takes (none unless given). */
  positionals?: { max: number };
}

export class UsageError extends Error {}

export type Values<O extends Options> = ReturnType<
  typeof parseArgs<{ options: O; strict: true }>
>['values'];

/** The flags of `argv`, or a UsageError; `help` when `--help` was asked for. */
export function parseCli<O extends Options>(
  cli: Cli<O>,
  argv: string[],
): { help: true } | { help: false; values: Values<O>; positionals: string[] } {
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...cli.options, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: cli.positionals !== undefined,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (parsed.values.help === true) return { help: true };
  const max = cli.positionals?.max ?? 0;
  if (parsed.positionals.length > max) {
    throw new UsageError(`unexpected argument "${parsed.positionals[max]}"`);
  }
  return { help: false, values: parsed.values as Values<O>, positionals: parsed.positionals };
}

/** What a script reads from its command line, with its numbers checked. */
export interface ReadCli<O extends Options> {
  values: Values<O>;
  positionals: string[];
  /** The integer value of string flag `name` within [min, max], `fallback` when absent; exits 2 otherwise. */
  integer(name: keyof O & string, fallback: number, range?: { min?: number; max?: number }): number;
}

/**
 * `parseCli` for a script's own `process.argv`: prints the usage and exits 0
 * on `--help`, prints the problem and the usage and exits 2 on a bad flag.
 */
export function readCli<O extends Options>(
  cli: Cli<O>,
  argv: string[] = process.argv.slice(2),
): ReadCli<O> {
  let result: ReturnType<typeof parseCli<O>>;
  try {
    result = parseCli(cli, argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return usageError(cli, error.message);
  }
  if (result.help) {
    process.stdout.write(`${cli.usage.trimEnd()}\n`);
    process.exit(0);
  }
  const { values, positionals } = result;
  return {
    values,
    positionals,
    integer(name, fallback, range) {
      const raw = (values as Record<string, unknown>)[name];
      try {
        return integer(typeof raw === 'string' ? raw : undefined, name, fallback, range);
      } catch (error) {
        return usageError(cli, (error as Error).message);
      }
    },
  };
}

/** Stops the script with `problem` and its usage (exit 2). */
export function usageError(cli: Pick<Cli<Options>, 'usage'>, problem: string): never {
  process.stderr.write(`${problem}\n\n${cli.usage.trimEnd()}\n`);
  process.exit(2);
}

/** An integer flag's value within [min, max], its fallback when absent; a UsageError otherwise. */
export function integer(
  raw: string | undefined,
  name: string,
  fallback: number,
  { min = 0, max = Number.MAX_SAFE_INTEGER }: { min?: number; max?: number } = {},
): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`--${name} must be an integer ${range}, got "${raw}"`);
  }
  return value;
}
