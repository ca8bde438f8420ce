/**
 * deploy/linux/chat.service, checked by systemd's own tool (systemd-analyze
 * 252, Debian 12), which reads unit files without a running systemd:
 * `verify` must print nothing, and `security --offline=true` must rate the
 * unit 3.0 or less. Its settings must pass the chat's config check and say
 * what deploy/linux and docs/deploy-linux.md rely on. (The chat running with
 * them behind nginx: linux-nginx.test.ts.)
 */
import { execFile, spawnSync } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaults, loadConfig } from '../../server/core/config.ts';
import { nodeFlags } from '../../server/process/node-flags.ts';
import { readEnvFile, readUnit, UNIT_FILE, type Unit } from './systemd-unit.ts';

const hasSystemdAnalyze =
  spawnSync('systemd-analyze', ['--version'], { stdio: 'ignore' }).status === 0;
if (!hasSystemdAnalyze && process.env.CI) {
  throw new Error('systemd-analyze must be installed in CI (apt-get install systemd)');
}

const run = promisify(execFile);

/** systemd-analyze's output for `args`, whether it exits 0 or not. */
async function analyze(...args: string[]): Promise<{ code: number; output: string }> {
  return run('systemd-analyze', args).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? 1,
      output: (error.stdout ?? '') + (error.stderr ?? ''),
    }),
  );
}

const title = hasSystemdAnalyze
  ? 'deploy/linux/chat.service'
  : 'deploy/linux/chat.service: SKIPPED, systemd-analyze is not installed here (CI installs systemd)';

describe(title, () => {
  let dir: string;
  let unitPath: string;
  let unit: Unit;

  beforeAll(async () => {
    // A unit is named after its file: check it as chat.service.
    dir = await mkdtemp(join(tmpdir(), 'chat-unit-'));
    unitPath = join(dir, 'chat.service');
    await copyFile(UNIT_FILE, unitPath);
    unit = await readUnit();
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  describe.skipIf(!hasSystemdAnalyze)('checked by systemd-analyze', () => {
    it('passes `verify` without a word', async () => {
      expect(await analyze('verify', unitPath)).toEqual({ code: 0, output: '' });
    });

    it('really verifies: a misspelt setting is reported', async () => {
      const broken = join(dir, 'broken.service');
      const source = await readFile(UNIT_FILE, 'utf8');
      await writeFile(broken, source.replace('DynamicUser=yes', 'DynamicUsr=yes'));
      const { output } = await analyze('verify', broken);
      expect(output).toMatch(/Unknown key 'DynamicUsr'/);
    });

    it('rates 3.0 or less in `security --offline=true` ("OK")', async () => {
      const { output } = await analyze('security', '--offline=true', unitPath);
      const level = /Overall exposure level for chat\.service: (\d+\.\d+) (\w+)/.exec(output);
      expect(level, output).not.toBeNull();
      expect(Number(level?.[1])).toBeLessThanOrEqual(3.0);
      expect(level?.[2]).toBe('OK');
    });
  });

  describe('its settings', () => {
    it('pass the chat’s config check, with the sample chat.env on top', async () => {
      const config = loadConfig({ ...unit.environment(), ...(await readEnvFile()) });
      expect(config).toMatchObject({
        host: '127.0.0.1',
        port: 3000,
        trustProxy: 'loopback',
        serveStatic: false,
      });
    });

    it('keep the SQLite file in the state directory systemd creates', () => {
      const config = loadConfig(unit.environment());
      expect(unit.get('Service', 'StateDirectory')).toBe('chat');
      expect(config.databaseUrl).toBe('sqlite:/var/lib/chat/chat.sqlite');
    });

    it('run the built entry under Node from the release folder, not through npm', () => {
      const workingDirectory = unit.get('Service', 'WorkingDirectory');
      expect(unit.get('Service', 'ExecStart')).toBe(
        `/usr/bin/node ${nodeFlags.join(' ')} ${workingDirectory}/dist/server/main.js`,
      );
    });

    it('run as a user of its own, with the settings file optional', () => {
      expect(unit.get('Service', 'DynamicUser')).toBe('yes');
      expect(unit.get('Service', 'EnvironmentFile')).toBe('-/etc/chat/chat.env');
    });

    it('restart the chat when it fails, and give SIGTERM time to answer the waiting polls', () => {
      expect(unit.get('Service', 'Restart')).toBe('on-failure');
      expect(unit.get('Service', 'KillSignal')).toBe('SIGTERM');
      expect(
        Number.parseInt(unit.get('Service', 'TimeoutStopSec') ?? '', 10),
      ).toBeGreaterThanOrEqual(10);
    });

    it('allow a socket for every waiting poll the chat may hold, and then some', () => {
      expect(Number(unit.get('Service', 'LimitNOFILE'))).toBeGreaterThan(defaults.maxWaiters);
    });

    it('leave write-and-execute memory allowed: V8’s JIT needs it', () => {
      expect(unit.get('Service', 'MemoryDenyWriteExecute')).toBeUndefined();
    });
  });
});
