/**
 * The primary's restart policy, on a real primary whose workers crash at
 * start (`fixtures/crash-loop.ts`, with delays of 50, 100, 150 ms and a
 * give-up after 4 deaths in a row).
 */
import { spawn } from 'node:child_process';
import cluster from 'node:cluster';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { clusterUnsupported, runPrimary } from '../../server/process/cluster.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('the cluster primary', () => {
  describe('when its workers die as soon as they start', () => {
    it('restarts them with a doubling delay, then gives up and exits 1', async () => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'test/cluster/fixtures/crash-loop.ts'],
        {
          cwd: root,
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let output = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
      });
      const killer = setTimeout(() => child.kill('SIGKILL'), 25_000);
      try {
        const [code] = await once(child, 'exit');
        expect(code, output).toBe(1);
      } finally {
        clearTimeout(killer);
        child.kill('SIGKILL');
      }
      const delays = [...output.matchAll(/restarting in (\d+) ms/g)].map((m) => Number(m[1]));
      // Two slots, each restarted after deaths 1, 2 and 3, capped at 150 ms.
      expect(delays.sort((x, y) => x - y)).toEqual([50, 50, 100, 100, 150, 150]);
      expect(output.match(/crash loop, not restarting it/g)).toHaveLength(2);
      expect(output).toContain('every worker is in a crash loop');
    });
  });
});

describe('runPrimary', () => {
  describe('when every worker is in a crash loop', () => {
    it('resolves with exit code 1 and why, and leaves exiting to its caller', async () => {
      cluster.setupPrimary({
        exec: fileURLToPath(new URL('fixtures/exit-at-once.mjs', import.meta.url)),
        execArgv: [],
        silent: true,
      });
      const lines: string[] = [];
      const outcome = await runPrimary(
        { workers: 1, pollTimeoutMs: 1_000, presenceGraceMs: 0 },
        (_level, message) => lines.push(message),
        {
          firstDelayMs: 10,
          maxDelayMs: 20,
          stableMs: 60_000,
          maxQuickDeaths: 3,
          stopTimeoutMs: 500,
        },
      );
      expect(outcome).toEqual({ code: 1, why: 'every worker is in a crash loop' });
      expect(lines.filter((line) => line.includes('restarting in'))).toHaveLength(2);
      // Still running: the primary returned instead of exiting the process.
      expect(process.exitCode ?? 0).toBe(0);
    });
  });
});

describe('clusterUnsupported', () => {
  it('refuses a Windows named pipe, which Node cannot share between workers', () => {
    expect(clusterUnsupported('\\\\.\\pipe\\chat', 'win32')).toMatch(/named pipe/);
  });

  it('accepts a TCP port anywhere and a Unix socket path', () => {
    expect(clusterUnsupported(3000, 'win32')).toBeUndefined();
    expect(clusterUnsupported('/run/chat.sock', 'linux')).toBeUndefined();
  });
});
