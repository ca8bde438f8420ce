/**
 * Runs the real nginx (Debian's nginx-light) on the project's nginx files, as
 * a child process, without touching /etc, /run or /var:
 *
 * - `deploy/nginx.conf`, the complete file of the compose `web` image, with
 *   what ties it to its container swapped for temporary values (listen
 *   address, static root, upstream, pid/log/temp paths, `user`, worker
 *   count). Each swap must match exactly once, so an edit to nginx.conf that
 *   moves one of them fails loudly instead of testing a different config.
 * - `deploy/linux/nginx-site.conf`, a site file for a host's own nginx,
 *   included from a copy of Debian 12's stock main configuration
 *   (`debianMainConf`), either unchanged (`nginx -t`) or with only its
 *   listen lines changed (`startSite`).
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, watch } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../helpers/free-port.ts';

export const NGINX = '/usr/sbin/nginx';
export const NGINX_CONF = new URL('../../deploy/nginx.conf', import.meta.url);
export const NGINX_TLS_CONF = new URL('../../deploy/nginx-tls.conf', import.meta.url);
export const NGINX_SITE = fileURLToPath(
  new URL('../../deploy/linux/nginx-site.conf', import.meta.url),
);
export const NGINX_SITE_HTTPS = fileURLToPath(
  new URL('../../deploy/linux/nginx-site-https.conf', import.meta.url),
);

/** A change to Debian's main nginx.conf (the guide's step 5, for one), applied before nginx reads it. */
export type MainConfEdit = (main: string) => string | Promise<string>;
const unchanged: MainConfEdit = (main) => main;

export const hasNginx = existsSync(NGINX);
if (!hasNginx && process.env.CI) {
  throw new Error(`${NGINX} must be installed in CI (apt-get install nginx-light)`);
}

const run = promisify(execFile);

export interface RunningNginx {
  url: string;
  port: number;
  conf: string;
  /** nginx's error log so far. */
  errorLog(): Promise<string>;
  stop(): Promise<void>;
}

// --- deploy/nginx.conf (the compose web image) ------------------------------

export interface NginxSite {
  /** TCP port on 127.0.0.1 nginx listens on. */
  port: number;
  /** `host:port` of the chat. */
  upstream: string;
  /** Folder served as the static root (the built client). */
  root: string;
  /** Folder for the pid file, the logs and nginx's temp files. */
  dir: string;
  /** The open-file limit nginx runs under (soft and hard), and its workers set. */
  nofile: number;
}

function tempPaths(dir: string): string {
  return ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((kind) => `    ${kind}_temp_path ${join(dir, kind)};`)
    .join('\n');
}

/** Replaces each `from` exactly once; throws naming the file when one is not there once. */
export function swapOnce(source: string, swaps: [string, string][], file: string): string {
  let text = source;
  for (const [from, to] of swaps) {
    const count = text.split(from).length - 1;
    if (count !== 1) throw new Error(`${file}: expected "${from.trim()}" once, found ${count}`);
    text = text.replace(from, to);
  }
  return text;
}

/** `worker_rlimit_nofile N;` in an nginx file, and N. */
export function workerRlimitNofile(source: string): { line: string; value: number } {
  const match = /^worker_rlimit_nofile (\d+);/m.exec(source);
  if (!match) throw new Error('no worker_rlimit_nofile in the nginx file');
  return { line: match[0], value: Number(match[1]) };
}

export function renderNginxConf(source: string, site: NginxSite): string {
  const { dir } = site;
  return swapOnce(
    source,
    [
      ['user nginx;\n', ''],
      // The file's value is compose's `ulimits`; here nginx runs under `nofile`.
      [workerRlimitNofile(source).line, `worker_rlimit_nofile ${site.nofile};`],
      ['worker_processes auto;', 'worker_processes 1;'],
      ['pid /var/run/nginx.pid;', `pid ${join(dir, 'nginx.pid')};`],
      ['error_log /dev/stderr warn;', `error_log ${join(dir, 'error.log')} warn;`],
      ['access_log /dev/stdout;', `access_log ${join(dir, 'access.log')};\n${tempPaths(dir)}`],
      ['server app:3000 resolve;', `server ${site.upstream};`],
      ['listen 80;', `listen 127.0.0.1:${site.port};`],
      ['include /etc/nginx/tls.d/*.conf;', `include ${join(dir, 'tls.d')}/*.conf;`],
      ['root /usr/share/nginx/html;', `root ${site.root};`],
    ],
    'deploy/nginx.conf',
  );
}

/**
 * deploy/nginx.conf in front of `upstream`, serving `root`, under an open-file
 * limit of `nofile` (by default this machine's hard limit).
 */
export function startNginx(
  site: Omit<NginxSite, 'port' | 'dir' | 'nofile'> & { nofile?: number; tls?: ComposeTls },
): Promise<RunningNginx> {
  return onFreePort(async (port) => {
    const dir = await nginxDir();
    await mkdir(join(dir, 'tls.d'));
    if (site.tls) await writeFile(join(dir, 'tls.d', 'tls.conf'), await renderTlsConf(site.tls));
    const nofile = site.nofile ?? hardNofile();
    const source = await readFile(NGINX_CONF, 'utf8');
    const conf = renderNginxConf(source, { ...site, port, dir, nofile });
    return runNginx(dir, conf, port, undefined, nofile);
  });
}

/** What deploy/docker-compose.https.yml mounts: the certificate, and the port 443 becomes. */
export interface ComposeTls {
  fullchain: string;
  privkey: string;
  port: number;
}

/**
 * deploy/nginx-tls.conf with its port and certificate paths swapped, and
 * nginx 1.25's `http2 on;` written as Debian 12's nginx 1.22 spells it
 * (`listen … ssl http2`): the one change needed to run the compose file's
 * HTTP/2 here.
 */
export async function renderTlsConf(tls: ComposeTls): Promise<string> {
  return swapOnce(
    await readFile(NGINX_TLS_CONF, 'utf8'),
    [
      ['listen 443 ssl;\nhttp2 on;\n', `listen 127.0.0.1:${tls.port} ssl http2;\n`],
      ['/etc/nginx/tls/fullchain.pem', tls.fullchain],
      ['/etc/nginx/tls/privkey.pem', tls.privkey],
    ],
    'deploy/nginx-tls.conf',
  );
}

/** This process's hard limit on open files: what a child may be given at most. */
export function hardNofile(): number {
  return Number(execFileSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).trim());
}

// --- deploy/linux/nginx-site.conf (a host's own nginx) ----------------------

/**
 * Debian 12's stock /etc/nginx/nginx.conf (package nginx-common), with
 * `include /etc/nginx/sites-enabled/*;` replaced by an include of `site`, and
 * the pid, logs and temp files moved into `dir` so the test needs neither
 * root's paths nor a system nginx's. `user www-data;` is kept when running as
 * root (nginx's workers switch to it); other users cannot switch.
 */
export function debianMainConf(dir: string, site: string): string {
  const asRoot = process.getuid?.() === 0;
  return `${asRoot ? 'user www-data;\n' : ''}worker_processes auto;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')};
include /etc/nginx/modules-enabled/*.conf;

events {
    worker_connections 768;
}

http {
    sendfile on;
    tcp_nopush on;
    types_hash_max_size 2048;

    include /etc/nginx/mime.types;
    default_type application/octet-stream;

    ssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3;
    ssl_prefer_server_ciphers on;

    access_log ${join(dir, 'access.log')};
${tempPaths(dir)}

    gzip on;

    include /etc/nginx/conf.d/*.conf;
    include ${site};
}
`;
}

/** `nginx -t` on the site file, unchanged, in Debian's main configuration: its output. */
export async function checkSite(
  site = NGINX_SITE,
  editMain: MainConfEdit = unchanged,
): Promise<{ ok: boolean; output: string }> {
  const dir = await nginxDir();
  try {
    const confPath = join(dir, 'nginx.conf');
    await writeFile(confPath, await editMain(debianMainConf(dir, site)));
    const result = await run(NGINX, ['-t', ...debianArgs(dir, confPath)]).then(
      ({ stderr }) => ({ ok: true, output: stderr }),
      (error: { stderr?: string }) => ({ ok: false, output: error.stderr ?? String(error) }),
    );
    return result;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Whether the loopback interface has an IPv6 address (containers may lack one). */
export function hasIpv6Loopback(): boolean {
  try {
    return readFileSync('/proc/net/if_inet6', 'utf8')
      .split('\n')
      .some((line) => line.startsWith('00000000000000000000000000000001'));
  } catch {
    return false;
  }
}

/**
 * The site file with only its listen lines changed: `listen 80;` to a free
 * port on 127.0.0.1 and `listen [::]:80;` to the same port on ::1 (dropped
 * where the loopback has no IPv6). `more` applies further swaps, which the
 * caller must name in its test.
 */
export interface SiteOptions {
  /** Further swaps in the site file, which the caller must name in its test. */
  more?: [string, string][];
  /** A change to Debian's main file. */
  editMain?: MainConfEdit;
  /** The open-file limit nginx runs under (default: inherited). */
  nofile?: number;
}

export function startSite(
  more: [string, string][] = [],
  options: Omit<SiteOptions, 'more'> = {},
): Promise<RunningNginx> {
  return onFreePort(async (port) => {
    const dir = await nginxDir();
    const site = swapOnce(
      await readFile(NGINX_SITE, 'utf8'),
      [...listenSwaps('80', '', port), ...more],
      'deploy/linux/nginx-site.conf',
    );
    return runSite(dir, site, port, options);
  });
}

/** `listen <port><flags>;` and `listen [::]:<port><flags>;` to `port` on loopback (IPv6 dropped where absent). */
function listenSwaps(from: string, flags: string, port: number, suffix = ''): [string, string][] {
  return [
    [`    listen ${from}${flags};${suffix}\n`, `    listen 127.0.0.1:${port}${flags};\n`],
    [
      `    listen [::]:${from}${flags}${suffix ? ' ipv6only=on' : ''};${suffix}\n`,
      hasIpv6Loopback() ? `    listen [::1]:${port}${flags};\n` : '',
    ],
  ];
}

async function runSite(
  dir: string,
  site: string,
  port: number,
  { editMain = unchanged, nofile }: SiteOptions,
): Promise<RunningNginx> {
  const sitePath = join(dir, 'chat-site.conf');
  await writeFile(sitePath, site);
  const main = await editMain(debianMainConf(dir, sitePath));
  return runNginx(dir, main, port, debianArgs, nofile);
}

/** What certbot puts under /etc/letsencrypt, made by the test. */
export interface TlsFiles {
  fullchain: string;
  privkey: string;
  /** certbot's options-ssl-nginx.conf. */
  options: string;
  dhparam: string;
}

export interface RunningHttpsSite extends RunningNginx {
  httpsPort: number;
}

/**
 * deploy/linux/nginx-site-https.conf (the site as certbot leaves it, HTTP/2
 * on) with only its listen ports and its /etc/letsencrypt paths changed: the
 * redirecting server on `port` (RunningNginx.url), the HTTPS one on
 * `httpsPort`.
 */
export async function startHttpsSite(tls: TlsFiles): Promise<RunningHttpsSite> {
  const httpsPort = await freePort();
  const certbot = '# managed by Certbot';
  const running = await onFreePort(async (port) => {
    const dir = await nginxDir();
    const site = swapOnce(
      await readFile(NGINX_SITE_HTTPS, 'utf8'),
      [
        ...listenSwaps('443', ' ssl http2', httpsPort, ` ${certbot}`),
        ...listenSwaps('80', '', port),
        [
          `ssl_certificate /etc/letsencrypt/live/chat.example.com/fullchain.pem; ${certbot}`,
          `ssl_certificate ${tls.fullchain};`,
        ],
        [
          `ssl_certificate_key /etc/letsencrypt/live/chat.example.com/privkey.pem; ${certbot}`,
          `ssl_certificate_key ${tls.privkey};`,
        ],
        [`include /etc/letsencrypt/options-ssl-nginx.conf; ${certbot}`, `include ${tls.options};`],
        [
          `ssl_dhparam /etc/letsencrypt/ssl-dhparams.pem; ${certbot}`,
          `ssl_dhparam ${tls.dhparam};`,
        ],
      ],
      'deploy/linux/nginx-site-https.conf',
    );
    return runSite(dir, site, port, {});
  });
  return { ...running, httpsPort };
}

/**
 * Debian's prefix, so the main file's relative paths (modules/…, from
 * modules-enabled/) resolve as on Debian; `-e` keeps even nginx's first log
 * lines out of /var/log.
 */
function debianArgs(dir: string, confPath: string): string[] {
  return ['-p', '/usr/share/nginx/', '-e', join(dir, 'error.log'), '-c', confPath];
}

// --- running nginx ----------------------------------------------------------

/** A temporary folder nginx's workers can enter (they run as www-data or nobody under root). */
async function nginxDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'chat-nginx-'));
  await chmod(dir, 0o755);
  return dir;
}

/**
 * `nginx -t`, then nginx in the foreground; resolves once it listens (its pid
 * file holds its pid). Removes `dir` when stopped or when it fails.
 */
async function runNginx(
  dir: string,
  conf: string,
  port: number,
  paths = (tempDir: string, confPath: string) => ['-p', tempDir, '-c', confPath],
  nofile?: number,
): Promise<RunningNginx> {
  const confPath = join(dir, 'nginx.conf');
  await writeFile(confPath, conf);
  const args = [...paths(dir, confPath), '-g', 'daemon off;'];
  // prlimit (util-linux) sets the limit, then execs nginx: the same pid.
  const [command, commandArgs] =
    nofile === undefined
      ? [NGINX, args]
      : ['prlimit', [`--nofile=${nofile}:${nofile}`, '--', NGINX, ...args]];
  let child: ChildProcess | undefined;
  let stderr = '';
  try {
    await run(NGINX, ['-t', ...args]);
    child = spawn(command, commandArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    await listening(child, join(dir, 'nginx.pid'));
  } catch (error) {
    child?.kill('SIGKILL');
    const log = await readFile(join(dir, 'error.log'), 'utf8').catch(() => '');
    await rm(dir, { recursive: true, force: true });
    throw new Error(`${(error as Error).message}:\n${stderr}${log}`);
  }
  const running = child;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    conf,
    errorLog: () => readFile(join(dir, 'error.log'), 'utf8').catch(() => ''),
    async stop() {
      if (running.exitCode === null && running.signalCode === null) {
        const exited = once(running, 'exit');
        running.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * nginx writes its pid into the pid file after it has bound its listening
 * sockets, so the file holding the child's pid means it accepts connections.
 * (`nginx -t` leaves an empty pid file behind: the content is what counts.)
 * Fails if nginx exits first.
 */
function listening(child: ChildProcess, pidFile: string): Promise<void> {
  const written = () => {
    try {
      return readFileSync(pidFile, 'utf8').trim() === String(child.pid);
    } catch {
      return false;
    }
  };
  return new Promise((resolve, reject) => {
    const watcher = watch(join(pidFile, '..'), () => {
      if (written()) done();
    });
    const onExit = (code: number | null) => {
      watcher.close();
      reject(new Error(`nginx exited with ${code} before listening`));
    };
    const done = () => {
      watcher.close();
      child.off('exit', onExit);
      resolve();
    };
    child.once('exit', onExit);
    if (written()) done();
  });
}

/**
 * Runs `start` on a port the kernel just handed out and released. A port
 * taken between that and nginx's bind (another test on this machine) is
 * retried on a new one.
 */
async function onFreePort(start: (port: number) => Promise<RunningNginx>): Promise<RunningNginx> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await freePort());
    } catch (error) {
      if (attempt === 3 || !/Address already in use/.test(String(error))) throw error;
    }
  }
}
