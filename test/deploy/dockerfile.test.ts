/**
 * The Dockerfile cannot be built here (no Docker engine, no registry), so
 * this reads it: the stages docker-compose names exist, the image runs on a
 * supported Node LTS, the app stage holds only what production needs and
 * runs the entrypoint as a non-root user, with its SQLite folder a volume and
 * a health check on /ready. What the entrypoint does is run for real in
 * docker-entrypoint.test.ts; a build on a machine with Docker is still the
 * real test of the file (docs/deploy.md says so).
 */
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { nodeFlags } from '../../server/process/node-flags.ts';

const read = (path: string) => readFile(new URL(`../../${path}`, import.meta.url), 'utf8');

/** The lines of one stage: from its FROM to the next FROM. */
function stage(dockerfile: string, name: string): string {
  const stages = dockerfile.split(/^(?=FROM )/m);
  const found = stages.find((text) => new RegExp(`^FROM \\S+ AS ${name}\\s`).test(text));
  if (!found) throw new Error(`no stage "${name}" in the Dockerfile`);
  return found;
}

/** The JSON-array form of an instruction (`CMD ["node", "x"]`), as a list. */
function execForm(text: string, instruction: string): string[] | undefined {
  const args = new RegExp(`^${instruction} (\\[.*\\])$`, 'm').exec(text)?.[1];
  return args === undefined ? undefined : (JSON.parse(args) as string[]);
}

describe('Dockerfile', () => {
  let dockerfile: string;

  beforeAll(async () => {
    dockerfile = await read('Dockerfile');
  });

  it('builds and runs on the newest Node that package.json’s engines admits (the current LTS), with no compiler', async () => {
    const { engines } = JSON.parse(await read('package.json')) as { engines: { node: string } };
    const majors = [...engines.node.matchAll(/(?:\^|>=)(\d+)\./g)].map((m) => Number(m[1]));
    expect(majors.length).toBeGreaterThan(0);
    expect(dockerfile).toMatch(
      new RegExp(`^ARG NODE_IMAGE=node:${Math.max(...majors)}-bookworm-slim$`, 'm'),
    );
    expect(stage(dockerfile, 'app')).toMatch(/^FROM \$\{NODE_IMAGE\} AS app$/m);
    const build = stage(dockerfile, 'build');
    expect(build).toMatch(/^FROM \$\{NODE_IMAGE\} AS build$/m);
    expect(build).not.toMatch(/apt-get|python3|\bmake\b|g\+\+|build-essential/);
    expect(build).toMatch(/RUN npm ci\n/);
    // npm ci runs no install script of better-sqlite3 (it would call
    // node-gyp, which needs the compiler the image does not have).
    const { allowScripts } = JSON.parse(await read('package.json')) as {
      allowScripts: Record<string, boolean>;
    };
    expect(allowScripts['better-sqlite3']).toBe(false);
    expect(build).toMatch(/npm run build && npm prune --omit=dev/);
  });

  describe('the app stage', () => {
    let app: string;
    beforeAll(() => {
      app = stage(dockerfile, 'app');
    });

    it('holds the build and the production dependencies, and no sources', () => {
      const copied = [...app.matchAll(/^COPY --from=build \/app\/(\S+)/gm)].map((m) => m[1]);
      expect(copied.sort()).toEqual([
        'dist',
        'node_modules',
        'package.json',
        'public',
        'scripts/docker-entrypoint.mjs',
      ]);
    });

    it('runs the entrypoint, which runs the same build `npm start` runs, as the node user, last', async () => {
      expect(execForm(app, 'CMD')).toEqual(['node', ...nodeFlags, 'scripts/docker-entrypoint.mjs']);
      expect(await read('scripts/docker-entrypoint.mjs')).toContain(
        "await import('../dist/server/main.js');",
      );
      expect(await read('scripts/start.mjs')).toContain("await import('../dist/server/main.js');");
      expect(app).toMatch(/^USER node$/m);
      expect(dockerfile.trimEnd().split('\n').at(-1)).toMatch(/^CMD /);
    });

    it('keeps the SQLite folder in a volume the node user owns', () => {
      expect(app).toMatch(/^RUN mkdir data && chown node:node data$/m);
      expect(execForm(app, 'VOLUME')).toEqual(['/app/data']);
      // VOLUME after the chown: a new volume starts with that owner.
      expect(app.indexOf('VOLUME')).toBeGreaterThan(app.indexOf('chown node:node data'));
      expect(app).toMatch(/^WORKDIR \/app$/m);
    });

    it('checks the app’s readiness on /ready and stops it with SIGTERM', () => {
      expect(app).toMatch(/HEALTHCHECK[\s\S]*\/ready/);
      expect(app).toMatch(/^STOPSIGNAL SIGTERM$/m);
    });
  });

  it('gives nginx the deploy config and the built client', () => {
    const web = stage(dockerfile, 'web');
    expect(web).toContain('COPY deploy/nginx.conf /etc/nginx/nginx.conf');
    expect(web).toContain('COPY --from=build /app/public /usr/share/nginx/html');
  });

  it('keeps the host’s installs and builds out of the image', async () => {
    const ignored = (await read('.dockerignore')).split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', 'public', 'data']));
  });
});
