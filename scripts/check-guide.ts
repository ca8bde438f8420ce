/**
 * `npm run check:guide`: runs every command block of docs/long-polling.md,
 * in order, as a reader would, and checks that each prints what the guide
 * says (the checks are HTML comments under each block: scripts/guide-blocks.ts).
 *
 * Re-runnable, like the guide, and on the same servers: the first round
 * starts them, and every later round (`--rounds=N`, 2 by default) runs every
 * other command again against those servers and their database, so a
 * command that only works on a fresh database (a cursor assumed instead of
 * read from an answer) fails. The servers listen on the guide's own
 * variables (NAIVE_PORT, FIXED_PORT, CHAT_PORT), kept when set and free
 * ports otherwise. The guide's `mktemp -d` folders go into a folder of the
 * check's own (TMPDIR), removed with the servers at the end. Exits 1 on any
 * unmet promise, with the command's output.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../test/helpers/free-port.ts';
import { readCli } from './cli.ts';
import { type Block, guideBlocks, unmet } from './guide-blocks.ts';

const root = resolve(import.meta.dirname, '..');
const GUIDE = 'docs/long-polling.md';
const START_TIMEOUT_MS = 60_000;
const COMMAND_TIMEOUT_MS = 300_000;
const cli = readCli({
  usage: `usage: npm run check:guide [-- --rounds=N]

Runs every command block of ${GUIDE} and checks what each prints.

  --rounds=N     run the guide N times (default 2): the first round starts the
                 servers, each later one runs every command again on them
  -h, --help     this help

NAIVE_PORT, FIXED_PORT and CHAT_PORT are kept when set; free ports otherwise.`,
  options: { rounds: { type: 'string' } },
});
const rounds = cli.integer('rounds', 2, { min: 1 });
/** TMPDIR of every command: the guide's `mktemp -d` folders land here, removed at the end. */
const scratch = mkdtempSync(join(tmpdir(), 'check-guide-'));

const servers = new Set<ChildProcess>();
function stopServers(): void {
  for (const child of servers) {
    // Each runs in its own process group: npm, tsx and node go together.
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM');
  }
  servers.clear();
}
process.once('exit', () => {
  stopServers();
  rmSync(scratch, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    stopServers();
    process.exit(130);
  });
}

function bash(script: string, env: NodeJS.ProcessEnv): ChildProcess {
  return spawn('bash', ['-c', `set -o pipefail\n${script}`], {
    cwd: root,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function collect(child: ChildProcess): () => string {
  let output = '';
  const add = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout!.on('data', add);
  child.stderr!.on('data', add);
  return () => output;
}

/** Starts a server block and resolves once its output shows it is ready. */
async function start(block: Block, ready: RegExp, env: NodeJS.ProcessEnv): Promise<string[]> {
  const child = bash(block.script, env);
  servers.add(child);
  const output = collect(child);
  return new Promise((resolveReady) => {
    const timer = setTimeout(
      () => done([`not ready within ${START_TIMEOUT_MS / 1000} s`]),
      START_TIMEOUT_MS,
    );
    const onData = () => {
      if (ready.test(output())) done([]);
    };
    const onExit = (code: number | null) => done([`exited (${code}) before it was ready`]);
    function done(problems: string[]): void {
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.stderr!.off('data', onData);
      child.off('exit', onExit);
      resolveReady(problems.map((p) => `${p}\n${indent(output())}`));
    }
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', onExit);
  });
}

/** Runs a command block to its end and checks what it printed and how long it took. */
async function run(
  block: Block,
  env: NodeJS.ProcessEnv,
): Promise<{ problems: string[]; seconds: number }> {
  const started = performance.now();
  const child = bash(block.script, env);
  const output = collect(child);
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), COMMAND_TIMEOUT_MS);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  const seconds = (performance.now() - started) / 1000;
  const problems = unmet(block.checks, output(), seconds);
  if (code !== 0) problems.unshift(`exited with ${code}`);
  if (problems.length > 0) problems.push(`output:\n${indent(output())}`);
  return { problems, seconds };
}

const indent = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .slice(-40)
    .map((line) => `      | ${line}`)
    .join('\n');

/** The port in `name` when it is set, else a free one. */
async function portFor(name: 'NAIVE_PORT' | 'FIXED_PORT' | 'CHAT_PORT'): Promise<string> {
  const set = process.env[name]?.trim();
  return set ? set : String(await freePort());
}

/** Runs every block; the servers' blocks only when `startServers` (the first round). */
async function round(
  blocks: Block[],
  env: NodeJS.ProcessEnv,
  startServers: boolean,
): Promise<number> {
  let failures = 0;
  for (const block of blocks) {
    const first = block.script.split('\n').find((line) => !/^[A-Z]=/.test(line)) ?? block.script;
    const title = `${GUIDE}:${block.line} ${first.slice(0, 70)}`;
    const skip = block.checks.find((check) => check.kind === 'skip');
    const starts = block.checks.find((check) => check.kind === 'starts');
    let problems: string[];
    let note = '';
    if (block.checks.length === 0) {
      problems = [
        'has no check: say what it prints (<!-- check: prints /…/ -->) or why it is skipped',
      ];
    } else if (skip) {
      process.stdout.write(`  - ${title} (skipped: ${skip.reason})\n`);
      continue;
    } else if (starts && !startServers) {
      process.stdout.write(`  - ${title} (running since round 1)\n`);
      continue;
    } else if (starts) {
      problems = await start(block, starts.ready, env);
      note = ' (running)';
    } else {
      const result = await run(block, env);
      problems = result.problems;
      note = ` (${result.seconds.toFixed(1)} s)`;
    }
    if (problems.length === 0) {
      process.stdout.write(`  ✓ ${title}${note}\n`);
    } else {
      failures += 1;
      process.stdout.write(`  ✗ ${title}\n${problems.map((p) => `    ${p}`).join('\n')}\n`);
    }
  }
  return failures;
}

const blocks = guideBlocks(readFileSync(resolve(root, GUIDE), 'utf8'));
const env: NodeJS.ProcessEnv = {
  ...process.env,
  NAIVE_PORT: await portFor('NAIVE_PORT'),
  FIXED_PORT: await portFor('FIXED_PORT'),
  CHAT_PORT: await portFor('CHAT_PORT'),
  TMPDIR: scratch,
};
process.stdout.write(
  `ports: naive ${env.NAIVE_PORT}, fixed ${env.FIXED_PORT}, chat ${env.CHAT_PORT}\n`,
);
let failures = 0;
try {
  for (let i = 1; i <= rounds; i += 1) {
    const how = i === 1 ? 'fresh servers' : 'the same servers and database';
    process.stdout.write(
      `${GUIDE}, round ${i} of ${rounds} (${how}): ${blocks.length} command blocks\n`,
    );
    failures += await round(blocks, env, i === 1);
  }
} finally {
  stopServers();
}
if (failures > 0) {
  process.stdout.write(`\n${failures} command block(s) of ${GUIDE} did not do what it says\n`);
  process.exitCode = 1;
} else {
  process.stdout.write(`every command of ${GUIDE} does what it says\n`);
}
