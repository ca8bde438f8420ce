/**
 * Runs the real `deploy/nginx.conf` under the Debian nginx, as a child
 * process, in front of a chat on loopback.
 *
 * The file is the one docker-compose uses; only what ties it to the container
 * is swapped for temporary values: the listen address, the static root, the
 * upstream, the pid/log/temp paths (so nginx runs without touching /var or
 * /run), the `user` line and the worker count. Each swap must match exactly
 * once, so an edit to nginx.conf that moves one of them fails here loudly
 * instead of testing a different config.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, watch } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const NGINX = '/usr/sbin/nginx';
export const NGINX_CONF = new URL('../../deploy/nginx.conf', import.meta.url);

export interface NginxSite {
  /** TCP port on 127.0.0.1 nginx listens on. */
  port: number;
  /** `host:port` of the chat. */
  upstream: string;
  /** Folder served as the static root (the built client). */
  root: string;
  /** Folder for the pid file, the logs and nginx's temp files. */
  dir: string;
}

export function renderNginxConf(source: string, site: NginxSite): string {
  const { dir } = site;
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((kind) => `    ${kind}_temp_path ${join(dir, kind)};`)
    .join('\n');
  const swaps: [string, string][] = [
    ['user nginx;\n', ''],
    ['worker_processes auto;', 'worker_processes 1;'],
    ['pid /var/run/nginx.pid;', `pid ${join(dir, 'nginx.pid')};`],
    ['error_log /dev/stderr warn;', `error_log ${join(dir, 'error.log')} warn;`],
    ['access_log /dev/stdout;', `access_log ${join(dir, 'access.log')};\n${temp}`],
    ['server app:3000 resolve;', `server ${site.upstream};`],
    ['listen 80;', `listen 127.0.0.1:${site.port};`],
    ['root /usr/share/nginx/html;', `root ${site.root};`],
  ];
  let conf = source;
  for (const [from, to] of swaps) {
    const count = conf.split(from).length - 1;
    if (count !== 1)
      throw new Error(`deploy/nginx.conf: expected "${from.trim()}" once, found ${count}`);
    conf = conf.replace(from, to);
  }
  return conf;
}

export interface RunningNginx {
  url: string;
  port: number;
  conf: string;
  stop(): Promise<void>;
}

/**
 * Starts nginx with the rendered config; resolves once it listens (its pid
 * file holds its pid). A port taken between `freePort()` and nginx's bind
 * (another test on this machine) is retried on a new port.
 */
export async function startNginx(site: Omit<NginxSite, 'port' | 'dir'>): Promise<RunningNginx> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startNginxOnce(site, await freePort());
    } catch (error) {
      if (attempt === 3 || !/Address already in use/.test(String(error))) throw error;
    }
  }
}

async function startNginxOnce(
  site: Omit<NginxSite, 'port' | 'dir'>,
  port: number,
): Promise<RunningNginx> {
  const dir = await mkdtemp(join(tmpdir(), 'chat-nginx-'));
  // Run as root (CI), nginx's workers run as `nobody`: they must reach the folder.
  await chmod(dir, 0o755);
  const conf = renderNginxConf(await readFile(NGINX_CONF, 'utf8'), { ...site, port, dir });
  const confPath = join(dir, 'nginx.conf');
  await writeFile(confPath, conf);
  const args = ['-p', dir, '-c', confPath, '-g', 'daemon off;'];
  await promisify(execFile)(NGINX, ['-t', ...args]);

  const child = spawn(NGINX, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  try {
    await listening(child, join(dir, 'nginx.pid'));
  } catch (error) {
    child.kill('SIGKILL');
    const log = await readFile(join(dir, 'error.log'), 'utf8').catch(() => '');
    await rm(dir, { recursive: true, force: true });
    throw new Error(`${(error as Error).message}:\n${stderr}${log}`);
  }

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    conf,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
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

/** A port the kernel just handed out and released: free unless someone races us to it. */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
