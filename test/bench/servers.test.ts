/**
 * The bench's servers (bench/lib/servers.ts) start with the environment
 * their spec gives them, never the shell's REDIS_URL: the bus is part of
 * what a bench run measures, and CI exports REDIS_URL for the test suites.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningServer, type ServerSpec, startServer } from '../../bench/lib/servers.ts';

const ECHO = new URL('fixtures/env-echo.mjs', import.meta.url).pathname;

function echoSpec(env?: Record<string, string>): ServerSpec {
  return {
    name: 'env-echo',
    label: 'env echo',
    argv: ['node', ECHO],
    ...(env ? { env } : {}),
    cursors: false,
    readyPath: '/time',
    processes: 1,
  };
}

async function redisUrlSeen(server: RunningServer): Promise<string | null> {
  const res = await fetch(`http://127.0.0.1:${server.port}/time`);
  return ((await res.json()) as { redisUrl: string | null }).redisUrl;
}

describe('startServer', () => {
  const shell = process.env.REDIS_URL;
  let server: RunningServer | undefined;

  afterEach(async () => {
    await server?.stop();
    server = undefined;
    if (shell === undefined) delete process.env.REDIS_URL;
    else process.env.REDIS_URL = shell;
  });

  it('does not pass the shell’s REDIS_URL to the server', async () => {
    process.env.REDIS_URL = 'redis://127.0.0.1:6379';
    server = await startServer(echoSpec());
    expect(await redisUrlSeen(server)).toBeNull();
  });

  it('passes a REDIS_URL the spec sets', async () => {
    process.env.REDIS_URL = 'redis://127.0.0.1:6379';
    server = await startServer(echoSpec({ REDIS_URL: 'redis://127.0.0.1:6380' }));
    expect(await redisUrlSeen(server)).toBe('redis://127.0.0.1:6380');
  });
});
