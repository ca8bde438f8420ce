/**
 * The command blocks of docs/deploy-linux.md, read from the guide itself so a
 * test runs what a reader runs. A block is named by the comment under it:
 *
 *   ```sh
 *   sudo ln -sfn "$release" /opt/chat/current
 *   ```
 *   <!-- block: first-install -->
 *
 * `runGuideScript` runs blocks in one bash, with `set -euo pipefail`, after a
 * prelude that the test names (variables, and stand-ins for what cannot run
 * here, such as systemd).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const LINUX_GUIDE = new URL('../../docs/deploy-linux.md', import.meta.url);

const run = promisify(execFile);

/** The ```sh block followed by `<!-- block: name -->`; throws unless exactly one. */
export async function guideBlock(name: string): Promise<string> {
  const markdown = await readFile(LINUX_GUIDE, 'utf8');
  const pattern = /```sh\n((?:(?!```)[\s\S])*)```\n<!-- block: ([\w-]+) -->/g;
  const found = [...markdown.matchAll(pattern)].filter((match) => match[2] === name);
  if (found.length !== 1) {
    throw new Error(`docs/deploy-linux.md: expected one block "${name}", found ${found.length}`);
  }
  return found[0]![1]!;
}

/** `script` with each `from` replaced, each expected exactly once (as nginx.ts's swapOnce). */
export function withLines(script: string, swaps: [string, string][]): string {
  let text = script;
  for (const [from, to] of swaps) {
    const count = text.split(from).length - 1;
    if (count !== 1) throw new Error(`guide block: expected "${from}" once, found ${count}`);
    text = text.replace(from, to);
  }
  return text;
}

/** Runs `prelude` then `script` in bash -euo pipefail, in `cwd`; resolves with stdout. */
export async function runGuideScript(
  prelude: string,
  script: string,
  cwd: string,
  env: Record<string, string> = {},
): Promise<string> {
  const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', `${prelude}\n${script}`], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, ...env },
  });
  return stdout;
}

/**
 * A main nginx.conf after step 5's edit (the guide's `nginx-limits` block,
 * run on a copy with `sudo` running as this user), `times` times.
 */
export async function withStep5Limits(main: string, times = 1): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'chat-step5-'));
  try {
    const path = join(dir, 'nginx.conf');
    await writeFile(path, main);
    const script = (await guideBlock('nginx-limits')).replaceAll('/etc/nginx/nginx.conf', path);
    for (let i = 0; i < times; i += 1) await runGuideScript('sudo() { "$@"; }', script, dir);
    return await readFile(path, 'utf8');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
