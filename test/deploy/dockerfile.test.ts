/**
 * The Dockerfile cannot be built here (no Docker engine), so this reads it:
 * the stages docker-compose names exist, and the app stage runs what
 * `npm run build` produces, as a non-root user, with a health check on
 * /health. A build on a machine with Docker is still the real test
 * (docs/deploy.md says so).
 */
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';

const read = (path: string) => readFile(new URL(`../../${path}`, import.meta.url), 'utf8');

/** The lines of one stage: from its FROM to the next FROM. */
function stage(dockerfile: string, name: string): string {
  const stages = dockerfile.split(/^(?=FROM )/m);
  const found = stages.find((text) => new RegExp(`^FROM \\S+ AS ${name}\\s`).test(text));
  if (!found) throw new Error(`no stage "${name}" in the Dockerfile`);
  return found;
}

describe('Dockerfile', () => {
  let dockerfile: string;
  let startScript: string;

  beforeAll(async () => {
    dockerfile = await read('Dockerfile');
    startScript = (JSON.parse(await read('package.json')) as { scripts: { start: string } }).scripts
      .start;
  });

  it('builds on Node 20 with the tools better-sqlite3 needs to compile', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:20-/m);
    const build = stage(dockerfile, 'build');
    expect(build).toMatch(/python3 make g\+\+/);
    expect(build).toMatch(/RUN npm ci\n/);
    expect(build).toMatch(/npm run build && npm prune --omit=dev/);
  });

  it('runs the entry point `npm start` runs, as the unprivileged node user, last', () => {
    const app = stage(dockerfile, 'app');
    const command = /^CMD \[(.*)\]$/m.exec(app)?.[1];
    expect(command && (JSON.parse(`[${command}]`) as string[]).join(' ')).toBe(startScript);
    expect(app).toMatch(/^USER node$/m);
    expect(dockerfile.trimEnd().split('\n').at(-1)).toMatch(/^CMD /);
  });

  it('checks the app’s health on /health', () => {
    expect(stage(dockerfile, 'app')).toMatch(/HEALTHCHECK[\s\S]*\/health/);
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
