/**
 * Starts bench processes with the open-file limit raised as far as the
 * machine allows (`ulimit -n` up to the hard limit): 10,000 waiting polls
 * need 10,000 sockets on each side, past the usual soft limit of 1,024.
 */
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';

export function spawnWithFileLimit(argv: string[], options: SpawnOptions): ChildProcess {
  const quoted = argv.map((arg) => `'${arg.replaceAll("'", `'\\''`)}'`).join(' ');
  return spawn('bash', ['-c', `ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec ${quoted}`], options);
}

/** `node` with tsx loaded, for the TypeScript bench servers and the load generator. */
export const nodeWithTsx = ['node', '--import', 'tsx'];
