/**
 * docs/deploy-linux.md's own commands, read from the guide (linux-guide.ts)
 * and run in a temporary folder:
 * - step 2 and step 10: two releases built, the second switched to, then
 *   rolled back from a new shell; `current` must be the old one again;
 * - step 5's edit of nginx.conf, run twice on Debian 12's main file, which
 *   `nginx -t` must still accept;
 * - step 7's HTTP/2 edit, run on the site as certbot leaves it, must give
 *   deploy/linux/nginx-site-https.conf, once or twice.
 *
 * What the test changes in the commands, and why:
 * - `/opt/chat` and `/etc/nginx/…` become paths in the temporary folder;
 * - the repository URL becomes a local repository with two tags, v1 and v2;
 * - step 2's three `npm` lines are left out (the build itself is
 *   production-start.test.ts's: it runs npm ci, build and prune in a copy);
 * - `sudo` runs its command as this user, and `systemctl` and `curl` only
 *   record their arguments: no systemd runs here, and no chat listens for
 *   the health check.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guideBlock, runGuideScript, withLines, withStep5Limits } from './linux-guide.ts';
import { checkSite, debianMainConf, hasNginx, NGINX_SITE, NGINX_SITE_HTTPS } from './nginx.ts';

const STAND_INS = `
sudo() { "$@"; }
systemctl() { echo "systemctl $*" >> "$TEST_DIR/calls.log"; }
curl() { echo "curl $*" >> "$TEST_DIR/calls.log"; }
`;

describe('docs/deploy-linux.md: upgrade and roll back, with the guide’s own commands', () => {
  let dir: string;
  let opt: string;

  /** The guide's build block for `tag`, from a local repository, without its npm lines. */
  async function build(tag: string): Promise<string> {
    const block = (await guideBlock('build')).replaceAll('/opt/chat', opt);
    return withLines(block, [
      ['version=v0.2.0 ', `version=${tag} `],
      ['https://github.com/<you>/long-poll-chat.git', `file://${join(dir, 'source')}`],
      ['npm ci ', '# npm ci '],
      ['npm run build ', '# npm run build '],
      ['npm prune --omit=dev ', '# npm prune --omit=dev '],
    ]);
  }
  const block = async (name: string) => (await guideBlock(name)).replaceAll('/opt/chat', opt);
  const run = (script: string) =>
    runGuideScript(STAND_INS, script, dir, { TEST_DIR: dir, USER: userName() });
  const current = async () => readlink(join(opt, 'current'));

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'chat-guide-'));
    opt = join(dir, 'opt', 'chat');
    await mkdir(opt, { recursive: true });
    // A repository with two releases, each saying which it is.
    const source = join(dir, 'source');
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', source, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args]);
    await mkdir(source);
    git('init', '-q');
    for (const tag of ['v1', 'v2']) {
      await writeFile(join(source, 'RELEASE'), `${tag}\n`);
      git('add', 'RELEASE');
      git('commit', '-qm', tag);
      git('tag', tag);
    }
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('installs v1 and points current at it (step 2, first install)', async () => {
    await run(`${await build('v1')}\n${await block('first-install')}`);
    expect(await current()).toBe(join(opt, 'releases', 'v1'));
  });

  it('builds v2 beside it without touching current, then switches, recording previous (step 10)', async () => {
    // One shell, as a reader runs step 2 then step 10 (the upgrade uses
    // step 2's $release); the test prints where current points in between.
    const output = await run(`${await build('v2')}
echo "before the switch: $(readlink ${opt}/current)"
${await block('upgrade')}`);
    expect(output).toContain(`before the switch: ${join(opt, 'releases', 'v1')}\n`);
    expect(await current()).toBe(join(opt, 'releases', 'v2'));
    expect(await readlink(join(opt, 'previous'))).toBe(join(opt, 'releases', 'v1'));
    expect(await readFile(join(opt, 'current', 'RELEASE'), 'utf8')).toBe('v2\n');
  });

  it('rolls back from a new shell: current is v1 again, and the chat is restarted', async () => {
    await rm(join(dir, 'calls.log'), { force: true });
    await run(await block('rollback'));
    expect(await current()).toBe(join(opt, 'releases', 'v1'));
    expect(await readFile(join(opt, 'current', 'RELEASE'), 'utf8')).toBe('v1\n');
    expect(await readFile(join(dir, 'calls.log'), 'utf8')).toBe('systemctl restart chat\n');
  });
});

describe.skipIf(!hasNginx)('docs/deploy-linux.md, step 5: the nginx.conf limits', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'chat-guide-nginx-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const edited = (main: string, times: number) => withStep5Limits(main, times);

  it('raises worker_connections and the file limit, and gives the same file when run twice', async () => {
    const main = debianMainConf(dir, NGINX_SITE);
    const once = await edited(main, 1);
    expect(await edited(main, 2)).toBe(once);
    expect(once.match(/^worker_rlimit_nofile 131072;$/gm)).toHaveLength(1);
    expect(once).toMatch(/^worker_rlimit_nofile 131072;\nevents \{\n\s+worker_connections 65536;/m);
    expect(once.replace(/^worker_rlimit_nofile 131072;\n/m, '')).toBe(
      main.replace('worker_connections 768;', 'worker_connections 65536;'),
    );
  });

  it('leaves a file nginx -t accepts, with the site included', async () => {
    const { ok, output } = await checkSite(NGINX_SITE, (main) => edited(main, 2));
    expect(output).toContain('test is successful');
    expect(ok).toBe(true);
  });
});

describe('docs/deploy-linux.md, step 7: HTTP/2 after certbot', () => {
  let dir: string;
  let https: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'chat-guide-h2-'));
    https = await readFile(NGINX_SITE_HTTPS, 'utf8');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  /** Runs the block's sed (its first command) `times` times on `site`. */
  async function turnOnHttp2(site: string, times: number): Promise<string> {
    const path = join(dir, 'chat');
    await writeFile(path, site);
    const sed = (await guideBlock('http2')).split('\n')[0]!;
    const script = sed.replace('/etc/nginx/sites-available/chat', path);
    for (let i = 0; i < times; i += 1) await runGuideScript(STAND_INS, script, dir);
    return readFile(path, 'utf8');
  }

  it('turns certbot’s listen lines into HTTP/2 ones, giving nginx-site-https.conf, also when run twice', async () => {
    const asCertbotLeavesIt = https.replace(/^(\s*listen \S+ ssl) http2/gm, '$1');
    expect(asCertbotLeavesIt).not.toMatch(/^\s*listen .*http2/m);
    expect(await turnOnHttp2(asCertbotLeavesIt, 1)).toBe(https);
    expect(await turnOnHttp2(asCertbotLeavesIt, 2)).toBe(https);
  });

  it('is nginx-site.conf plus certbot’s lines and its redirecting server, nothing else', async () => {
    const site = await readFile(NGINX_SITE, 'utf8');
    const fromUpstream = (text: string) => text.slice(text.indexOf('upstream chat_app {'));
    const https443 = fromUpstream(https)
      .slice(0, fromUpstream(https).indexOf('\nserver {\n    if ($host'))
      .split('\n')
      .filter((line) => !line.endsWith('# managed by Certbot'))
      .join('\n');
    const plain = fromUpstream(site)
      .replace('    listen 80;\n    listen [::]:80;\n', '')
      .replace('server_name _;', 'server_name chat.example.com;');
    const squeeze = (text: string) => text.replace(/\n{2,}/g, '\n').trim();
    expect(squeeze(https443)).toBe(squeeze(plain));
  });
});

function userName(): string {
  return execFileSync('id', ['-un'], { encoding: 'utf8' }).trim();
}
