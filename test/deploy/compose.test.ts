/**
 * The compose files, checked by docker-compose itself: `docker-compose config`
 * validates a file against the Compose schema and prints it resolved, with no
 * Docker engine needed (none runs here). The resolved file is then read to
 * check what the deployment relies on: no secret with a default, passwords
 * passed unchanged whatever they hold, log limits, health checks, start
 * order, the settings that make the chat right behind nginx, and that the
 * MongoDB variant is the same stack apart from its database.
 *
 * The required passwords are set for `config`.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SETTINGS_BEGIN } from '../../scripts/settings-table.ts';
import {
  type Compose,
  composeEnv,
  HTTPS_FILE,
  hasCompose,
  MAIN_FILE,
  MONGODB_FILE,
  PASSWORDS,
  ROOT,
  resolvedConfig,
  run,
} from './compose.ts';
import { NGINX_CONF } from './nginx.ts';

const title = hasCompose
  ? 'docker-compose files (docker-compose config)'
  : 'docker-compose files: SKIPPED, docker-compose is not installed here (CI installs it)';

describe.skipIf(!hasCompose)(title, () => {
  let main: Compose;
  let mongodb: Compose;

  beforeAll(async () => {
    [main, mongodb] = await Promise.all([resolvedConfig(MAIN_FILE), resolvedConfig(MONGODB_FILE)]);
  });

  it('really validates: a file with an unknown key is refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'chat-compose-'));
    try {
      const bad = join(dir, 'docker-compose.yml');
      await writeFile(bad, 'services:\n  app:\n    image: node:20\n    helthcheck: {}\n');
      await expect(run('docker-compose', ['-f', bad, 'config'])).rejects.toThrow(/helthcheck/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  describe('docker-compose.yml', () => {
    it('runs nginx, the chat, MariaDB and Redis', () => {
      expect(Object.keys(main.services).sort()).toEqual(['app', 'mariadb', 'redis', 'web']);
      expect(main.services.web?.build?.target).toBe('web');
      expect(main.services.app?.build?.target).toBe('app');
      expect(main.services.web?.ports?.map((port) => port.target)).toEqual([80]);
    });

    it('gives every service a health check, and starts each after what it needs is healthy', () => {
      for (const [name, service] of Object.entries(main.services)) {
        expect({ name, healthcheck: Array.isArray(service.healthcheck?.test) }).toEqual({
          name,
          healthcheck: true,
        });
      }
      expect(main.services.web?.depends_on).toEqual({ app: { condition: 'service_healthy' } });
      expect(main.services.app?.depends_on).toEqual({
        mariadb: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
      });
    });

    it('runs two replicas of the chat that share MariaDB and hear each other through Redis', () => {
      const app = main.services.app;
      expect(app?.deploy?.replicas).toBeGreaterThanOrEqual(2);
      expect(app?.environment?.DATABASE_URL).toBe('mysql://chat@mariadb:3306/chat');
      expect(app?.environment?.REDIS_URL).toBe('redis://redis:6379');
    });

    it('keeps MariaDB’s data in a named volume', () => {
      // docker-compose 1.29 prints the short syntax, with the mode.
      expect(main.services.mariadb?.volumes).toEqual(['mariadb-data:/var/lib/mysql:rw']);
    });

    it('sets the chat up for nginx: one trusted hop, no static files, a poll nginx waits for', async () => {
      const env = main.services.app?.environment ?? {};
      expect(env.TRUST_PROXY).toBe('1');
      expect(env.SERVE_STATIC).toBe('false');
      const nginx = await readFile(NGINX_CONF, 'utf8');
      const recv = nginx.slice(nginx.indexOf('location = /recv {'));
      const readTimeoutMs = Number(/proxy_read_timeout (\d+)s;/.exec(recv)?.[1]) * 1000;
      expect(Number(env.POLL_TIMEOUT_MS) + 10_000).toBeLessThanOrEqual(readTimeoutMs);
    });

    it('gives every service a log limit (json-file, rotated)', () => {
      for (const [name, service] of Object.entries(main.services)) {
        expect({ name, logging: service.logging }).toEqual({
          name,
          logging: { driver: 'json-file', options: { 'max-size': '10m', 'max-file': '3' } },
        });
      }
    });

    it('raises nginx’s and the chat’s open-file limit to nginx.conf’s worker_rlimit_nofile', async () => {
      const nginx = await readFile(NGINX_CONF, 'utf8');
      const rlimit = Number(/^worker_rlimit_nofile (\d+);/m.exec(nginx)?.[1]);
      const connections = Number(/worker_connections (\d+);/.exec(nginx)?.[1]);
      expect(rlimit).toBeGreaterThanOrEqual(2 * connections);
      for (const name of ['web', 'app']) {
        expect({ name, ulimits: main.services[name]?.ulimits }).toEqual({
          name,
          ulimits: { nofile: { soft: rlimit, hard: rlimit } },
        });
      }
    });

    it('checks readiness on the port the chat listens on', () => {
      const app = main.services.app;
      expect(app?.healthcheck?.test.join(' ')).toContain(
        `127.0.0.1:${app?.environment?.PORT}/ready`,
      );
    });
  });

  describe('deploy/docker-compose.https.yml on top of docker-compose.yml', () => {
    it('publishes 443 and mounts nginx-tls.conf and the certificate folder into web', async () => {
      const https = await resolvedConfig([MAIN_FILE, HTTPS_FILE], {
        ...PASSWORDS,
        TLS_DIR: '/etc/letsencrypt/live/chat.example.com',
      });
      const web = https.services.web;
      expect(web?.ports?.map((port) => port.target).sort()).toEqual([443, 80]);
      // Sorted on both sides: where the checkout lives decides the order.
      expect([...(web?.volumes ?? [])].sort()).toEqual(
        [
          '/etc/letsencrypt/live/chat.example.com:/etc/nginx/tls:ro',
          `${join(ROOT, 'deploy', 'nginx-tls.conf')}:/etc/nginx/tls.d/tls.conf:ro`,
        ].sort(),
      );
      const nginx = await readFile(NGINX_CONF, 'utf8');
      expect(nginx).toContain('include /etc/nginx/tls.d/*.conf;');
    });

    it('refuses to start without TLS_DIR', async () => {
      await expect(
        run('docker-compose', ['-f', MAIN_FILE, '-f', HTTPS_FILE, 'config'], {
          env: composeEnv(PASSWORDS),
        }),
      ).rejects.toThrow(/set TLS_DIR/);
    });
  });

  describe('docker-compose.yml: the database password', () => {
    it('has no default: without MYSQL_PASSWORD, config stops and says what to set', async () => {
      await expect(
        run('docker-compose', ['-f', MAIN_FILE, 'config'], { env: composeEnv({}) }),
      ).rejects.toThrow(/set MYSQL_PASSWORD/);
    });

    it('gives no secret a default anywhere in the file', async () => {
      const text = await readFile(MAIN_FILE, 'utf8');
      expect(text).not.toMatch(/\$\{\w*(PASSWORD|SECRET|TOKEN)\w*:?-/);
    });

    it('passes a password full of URL syntax to MariaDB and to the chat unchanged, apart from the URL', async () => {
      const password = `p@ss:w/rd%41?#[]&=+ é"'\\$x`;
      const { services } = await resolvedConfig(MAIN_FILE, { MYSQL_PASSWORD: password });
      // The resolved file escapes $ as $$, which compose turns back into $.
      const unescaped = (value: string | undefined) => value?.replaceAll('$$', '$');
      expect(unescaped(services.mariadb?.environment?.MARIADB_PASSWORD)).toBe(password);
      expect(unescaped(services.app?.environment?.DATABASE_PASSWORD)).toBe(password);
      // The image's entrypoint puts it into the URL, encoded: docker-entrypoint.test.ts.
      expect(services.app?.environment?.DATABASE_URL).not.toContain(password);
    });
  });

  describe('deploy/docker-compose.mongodb.yml', () => {
    it('runs MongoDB in place of MariaDB', () => {
      expect(Object.keys(mongodb.services).sort()).toEqual(['app', 'mongodb', 'redis', 'web']);
      expect(mongodb.services.app?.depends_on).toEqual({
        mongodb: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
      });
      expect(mongodb.services.mongodb?.healthcheck?.test).toBeDefined();
    });

    it('runs MongoDB with authentication: the chat logs in as a user named in its URL', () => {
      expect(mongodb.services.app?.environment?.DATABASE_URL).toMatch(
        /^mongodb:\/\/chat(:[^@]*)?@mongodb:27017\/chat\?/,
      );
      expect(mongodb.services.mongodb?.environment?.MONGO_INITDB_ROOT_PASSWORD).toBe(
        PASSWORDS.MONGO_ROOT_PASSWORD,
      );
    });

    it('has no default password: without its passwords, config stops and says what to set', async () => {
      await expect(
        run('docker-compose', ['-f', MONGODB_FILE, 'config'], { env: composeEnv({}) }),
      ).rejects.toThrow(/set MONGO_(ROOT_)?PASSWORD/);
    });

    it('gives every service a log limit (json-file, rotated)', () => {
      for (const [name, service] of Object.entries(mongodb.services)) {
        expect({ name, logging: service.logging }).toEqual({
          name,
          logging: { driver: 'json-file', options: { 'max-size': '10m', 'max-file': '3' } },
        });
      }
    });

    it('is otherwise the same stack as docker-compose.yml', () => {
      const withoutDatabase = ({ services }: Compose) => {
        const { app, web, redis } = services;
        const {
          DATABASE_URL: _url,
          DATABASE_PASSWORD: _password,
          ...environment
        } = app?.environment ?? {};
        return { web, redis, app: { ...app, environment, depends_on: undefined } };
      };
      expect(withoutDatabase(mongodb)).toEqual(withoutDatabase(main));
    });
  });
});

describe('.env.example', () => {
  it('names every variable the compose files read, and nothing else', async () => {
    const files = [MAIN_FILE, MONGODB_FILE, HTTPS_FILE];
    const read = new Set<string>();
    for (const file of files) {
      for (const match of (await readFile(file, 'utf8')).matchAll(/\$\{([A-Z_]+)/g)) {
        read.add(match[1]!);
      }
    }
    // The compose half: the chat's own settings follow it (scripts/env-example.ts).
    const whole = await readFile(join(ROOT, '.env.example'), 'utf8');
    const example = whole.slice(0, whole.indexOf(SETTINGS_BEGIN));
    const named = [...example.matchAll(/^#?([A-Z_]+)=/gm)].map((m) => m[1]!);
    expect([...new Set(named)].sort()).toEqual([...read].sort());
  });
});
