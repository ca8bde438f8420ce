/**
 * The chat's Node flags (server/process/node-flags.ts) are one list: every
 * way the chat starts carries exactly those, so a deploy runs under the
 * flags the benchmarks measured.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeFlags, withNodeFlags } from '../../server/process/node-flags.ts';
import { ROOT } from '../helpers/build.ts';
import { iisConfig } from './iis-config.ts';
import { readUnit } from './systemd-unit.ts';

const read = (path: string) => readFile(join(ROOT, path), 'utf8');
const WS = '/configuration/system.webServer';
/** The flags of a `node --a --b script` command line: what comes before the script. */
const flagsOf = (argv: string[]) =>
  argv.slice(
    1,
    argv.findIndex((arg, i) => i > 0 && !arg.startsWith('-')),
  );

describe('the chat’s Node flags', () => {
  it('are set at all (a list of none would leave every check below empty)', () => {
    expect(nodeFlags.length).toBeGreaterThan(0);
    for (const flag of nodeFlags) expect(flag).toMatch(/^--[a-z-]+(=\S+)?$/);
  });

  it('are what `npm start` runs Node with', async () => {
    const pkg = JSON.parse(await read('package.json')) as { scripts: { start: string } };
    const argv = pkg.scripts.start.split(' ');
    expect(argv[0]).toBe('node');
    expect(flagsOf(argv)).toEqual(nodeFlags);
  });

  it('are what the Docker image runs Node with', async () => {
    const cmd = /^CMD (\[.*\])$/m.exec(await read('Dockerfile'))?.[1];
    expect(flagsOf(JSON.parse(cmd!) as string[])).toEqual(nodeFlags);
  });

  it('are what the systemd unit runs Node with', async () => {
    const unit = await readUnit();
    expect(flagsOf(unit.get('Service', 'ExecStart')!.split(' '))).toEqual(nodeFlags);
  });

  it('reach Node through NODE_OPTIONS in each IIS web.config', () => {
    const options = nodeFlags.join(' ');
    const zoo = iisConfig(join(ROOT, 'web.config'));
    expect(zoo.pairs(`${WS}/heliconZoo/application/environmentVariables/add`).NODE_OPTIONS).toBe(
      options,
    );
    const hp = iisConfig(join(ROOT, 'deploy/iis/httpplatform/web.config'));
    expect(
      hp.pairs(`${WS}/httpPlatform/environmentVariables/environmentVariable`).NODE_OPTIONS,
    ).toBe(options);
    const ii = iisConfig(join(ROOT, 'deploy/iis/iisnode/web.config'));
    expect(ii.pairs('/configuration/appSettings/add', 'key').NODE_OPTIONS).toBe(options);
  });

  describe('for a cluster worker', () => {
    it('are added to a primary started without them', () => {
      expect(withNodeFlags(['--enable-source-maps'])).toEqual([
        '--enable-source-maps',
        ...nodeFlags,
      ]);
    });

    it('leave a flag the primary set itself as it was', () => {
      const own = nodeFlags.map((flag) => `${flag.split('=')[0]}=99`);
      expect(withNodeFlags(own)).toEqual(own);
    });
  });
});
