/**
 * The scripts that measure the built chat build it themselves, after reading
 * their flags, so `--help` or a bad flag answers at once instead of after a
 * build (package.json runs them without `npm run build &&` in front).
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');

/** Builds the client and the server (`npm run build`), or the server only; exits 1 if that fails. */
export function buildChat(what: 'client and server' | 'server' = 'client and server'): void {
  const [command, args] =
    what === 'server'
      ? ['npx', ['tsc', '-p', 'tsconfig.build.json']]
      : ['npm', ['run', '--silent', 'build']];
  try {
    execFileSync(command, args, { cwd: root, stdio: 'inherit' });
  } catch {
    process.stderr.write(`the build failed (${command} ${args.join(' ')}): see above\n`);
    process.exit(1);
  }
}
