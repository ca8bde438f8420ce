/**
 * The compose files as docker-compose itself resolves them (`docker-compose
 * config`, no engine needed), for the suites that read them.
 */
import { execFile } from 'node:child_process';
import { closeSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { commandPath } from '../helpers/needs.ts';

export const ROOT = new URL('../..', import.meta.url).pathname;
export const MAIN_FILE = join(ROOT, 'docker-compose.yml');
export const MONGODB_FILE = join(ROOT, 'deploy', 'docker-compose.mongodb.yml');
export const HTTPS_FILE = join(ROOT, 'deploy', 'docker-compose.https.yml');

// On the PATH, not `docker-compose version`: that starts Python and loads
// all of docker-compose, in every test worker that imports this module.
const composePath = commandPath('docker-compose');
export const hasCompose = composePath !== undefined;
if (!hasCompose && process.env.CI) {
  throw new Error('docker-compose must be installed in CI (apt-get install docker-compose)');
}

export interface Service {
  image?: string;
  logging?: { driver: string; options?: Record<string, string> };
  volumes?: string[];
  build?: { context: string; target: string };
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  deploy?: { replicas?: number };
  ports?: { target: number; published: number | string }[];
  ulimits?: { nofile?: { soft: number; hard: number } };
}

export interface Compose {
  services: Record<string, Service>;
}

export const run = promisify(execFile);

/** What the files require, set for `config`. */
export const PASSWORDS = {
  MYSQL_PASSWORD: 'test-password',
  MONGO_PASSWORD: 'test-password',
  MONGO_ROOT_PASSWORD: 'test-root-password',
};

/** The environment compose sees: this one without any variable the files read. */
export function composeEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of [
    ...Object.keys(PASSWORDS),
    'HTTP_PORT',
    'HTTPS_PORT',
    'MONGO_PORT',
    'TLS_DIR',
  ])
    delete env[name];
  return { ...env, ...vars };
}

/** `docker-compose -f file config`, read back as an object. */
export async function resolvedConfig(
  file: string | string[],
  vars: Record<string, string> = PASSWORDS,
): Promise<Compose> {
  const files = (Array.isArray(file) ? file : [file]).flatMap((f) => ['-f', f]);
  const { stdout } = await run('docker-compose', [...files, 'config'], {
    env: composeEnv(vars),
  });
  // PyYAML comes with docker-compose (it is written in Python): read it with
  // the Python that runs docker-compose.
  const { stdout: json } = await new Promise<{ stdout: string }>((resolve, reject) => {
    const child = execFile(
      composePython(),
      ['-c', 'import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)'],
      (error, out) => (error ? reject(error) : resolve({ stdout: out })),
    );
    child.stdin?.end(stdout);
  });
  return JSON.parse(json) as Compose;
}

let python: string | undefined;
/**
 * The interpreter on docker-compose's `#!` line (`/usr/bin/python3` on
 * Debian), or `python3` when that line asks env to find one. Not whatever
 * `python3` comes first on the PATH: it may lack PyYAML, or be a version
 * manager's shim that runs a chain of shell scripts before Python starts.
 */
function composePython(): string {
  if (python === undefined) {
    const head = Buffer.alloc(128);
    const fd = openSync(composePath!, 'r');
    readSync(fd, head);
    closeSync(fd);
    const shebang = /^#!\s*(\S+)/.exec(head.toString('latin1'))?.[1];
    python = shebang === undefined || shebang.endsWith('/env') ? 'python3' : shebang;
  }
  return python;
}
