import { readFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { describe, expect, it } from 'vitest';
import { SETTINGS_BEGIN } from '../../scripts/settings-table.ts';
import {
  ConfigError,
  defaults,
  loadConfig,
  rateLimitWindow,
  trustProxyWarning,
} from '../../server/core/config.ts';

/** The problems `loadConfig(env)` reports, or a failure if it accepts `env`. */
function problemsOf(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems.join('\n');
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    expect(loadConfig({})).toEqual(defaults);
    expect(Object.isFrozen(loadConfig({}))).toBe(true);
  });

  it('reads a TCP port or a pipe path', () => {
    expect(loadConfig({ PORT: '8080' }).port).toBe(8080);
    expect(loadConfig({ PORT: '\\\\.\\pipe\\chat-1234' }).port).toBe('\\\\.\\pipe\\chat-1234');
    expect(loadConfig({ PORT: '/run/chat.sock' }).port).toBe('/run/chat.sock');
  });

  it('reads every setting', () => {
    const config = loadConfig({
      HOST: '127.0.0.1',
      DATABASE_URL: 'mysql://chat:pw@db:3306/chat',
      REDIS_URL: 'redis://cache:6379',
      WORKERS: '4',
      POLL_TIMEOUT_MS: '1000',
      PRESENCE_STALE_MS: '2000',
      SEND_RATE: '0',
      TRUST_PROXY: 'loopback',
      ALLOWED_ORIGINS: 'https://a.example, https://b.example',
      SERVE_STATIC: 'false',
    });
    expect(config).toMatchObject({
      host: '127.0.0.1',
      databaseUrl: 'mysql://chat:pw@db:3306/chat',
      redisUrl: 'redis://cache:6379',
      workers: 4,
      pollTimeoutMs: 1000,
      presenceStaleMs: 2000,
      sendRatePerSec: 0,
      trustProxy: 'loopback',
      allowedOrigins: ['https://a.example', 'https://b.example'],
      serveStatic: false,
    });
    expect(loadConfig({ WORKERS: 'auto' }).workers).toBe(Math.max(1, cpus().length));
  });

  it('gives the defaults for .env.example uncommented as it is written', async () => {
    const example = await readFile(new URL('../../.env.example', import.meta.url), 'utf8');
    const settingsBlock = example.slice(example.indexOf(SETTINGS_BEGIN));
    const env = Object.fromEntries(
      [...settingsBlock.matchAll(/^#([A-Z_]+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]),
    );
    expect(Object.keys(env)).toEqual(
      expect.arrayContaining(['PORT', 'METRICS', 'MAX_CONNECTIONS']),
    );
    expect(loadConfig(env)).toEqual(defaults);
  });

  it('reports a bad value in the words of its setting', () => {
    expect(problemsOf({ MAX_ROOMS: '0' })).toBe(
      'MAX_ROOMS must be an integer from 1 to 10000000, got "0"',
    );
    expect(problemsOf({ METRICS: 'Sometimes' })).toBe(
      'METRICS must be true or false, got "sometimes"',
    );
    expect(problemsOf({ LOG_LEVEL: 'loud' })).toBe(
      'LOG_LEVEL must be error, warn, info or debug, got "loud"',
    );
    expect(problemsOf({ WORKERS: 'many' })).toBe(
      'WORKERS must be "auto" or an integer from 1 to 256, got "many"',
    );
    expect(problemsOf({ ALLOWED_HOSTS: 'chat.example, a:80' })).toBe(
      'ALLOWED_HOSTS has a bad host "a:80" (a name, *.name, an IPv4 or a [IPv6] address, no port)',
    );
  });

  it('bounds storage by default; 0 turns each bound off', () => {
    const off = loadConfig({
      SQLITE_MAX_MB: '0',
      RETENTION_DAYS: '0',
      RETENTION_PER_ROOM: '0',
      SEND_KB_PER_HOUR: '0',
    });
    expect(off).toMatchObject({
      sqliteMaxMb: undefined,
      retentionDays: 0,
      retentionPerRoom: 0,
      sendKbPerHour: 0,
    });
    expect(
      loadConfig({ RETENTION_DAYS: '7', RETENTION_PER_ROOM: '500', RETENTION_BATCH: '100' }),
    ).toMatchObject({ retentionDays: 7, retentionPerRoom: 500, retentionBatch: 100 });
  });

  it('reads the limits, the timeouts and the metrics settings', () => {
    const config = loadConfig({
      MAX_ROOMS: '500',
      ROOM_IDLE_MS: '60000',
      MAX_POLLS_PER_ADDRESS: '0',
      STORE_POLL_MS: '250',
      PRESENCE_NOTIFY_MS: '0',
      METRICS: 'off',
      METRICS_PORT: '9464',
      BODY_TIMEOUT_MS: '20000',
      HEADERS_TIMEOUT_MS: '5000',
      SEND_RATE: '2',
      SEND_BURST: '10',
      TYPING_RATE: '2',
      TYPING_BURST: '4',
      TYPING_WAKE_MS: '3000',
      TYPING_TTL_MS: '6000',
      LOG_LEVEL: 'debug',
      REDIS_TIMEOUT_MS: '2000',
      HEALTH_WRITE_WINDOW_MS: '5000',
      SQLITE_MAX_MB: '64',
      SQLITE_WAIT_MS: '0',
      DELIVERY_BATCH_MS: '0',
    });
    expect(config).toMatchObject({
      maxRooms: 500,
      roomIdleMs: 60_000,
      maxPollsPerAddress: 0,
      storePollMs: 250,
      presenceNotifyMs: 0,
      metrics: false,
      metricsPort: 9464,
      bodyTimeoutMs: 20_000,
      headersTimeoutMs: 5_000,
      sendRatePerSec: 2,
      sendBurst: 10,
      typingRatePerSec: 2,
      typingBurst: 4,
      typingWakeMs: 3_000,
      typingTtlMs: 6_000,
      logLevel: 'debug',
      redisTimeoutMs: 2_000,
      healthWriteWindowMs: 5_000,
      sqliteMaxMb: 64,
      sqliteWaitMs: 0,
      deliveryBatchMs: 0,
    });
    expect(loadConfig({ METRICS: 'on' }).metrics).toBe(true);
  });

  describe('with out-of-range limits', () => {
    const cases: [string, string][] = [
      ['MAX_ROOMS', '0'],
      ['ROOM_IDLE_MS', '10'],
      ['MAX_POLLS_PER_ADDRESS', '-1'],
      ['STORE_POLL_MS', 'often'],
      ['PRESENCE_NOTIFY_MS', '1.5'],
      ['METRICS', 'sometimes'],
      ['METRICS_PORT', '70000'],
      ['BODY_TIMEOUT_MS', '500'],
      ['HEADERS_TIMEOUT_MS', '0'],
      ['SEND_BURST', '0'],
      ['TYPING_RATE', '-1'],
      ['TYPING_BURST', '0'],
      ['TYPING_WAKE_MS', '50'],
      ['TYPING_TTL_MS', '60001'],
      ['PORT', 'abc'],
      ['PORT', 'chat.sock'],
      ['REDIS_TIMEOUT_MS', '0'],
      ['HEALTH_WRITE_WINDOW_MS', '10'],
      ['SQLITE_MAX_MB', '-1'],
      ['RETENTION_DAYS', '-1'],
      ['RETENTION_PER_ROOM', 'many'],
      ['RETENTION_INTERVAL_MS', '10'],
      ['RETENTION_BATCH', '0'],
      ['SEND_KB_PER_HOUR', '1.5'],
      ['HISTORY_RATE', '-1'],
      ['HISTORY_BURST', '0'],
      ['FORWARDED_FOR_MAX_BYTES', '10'],
      ['SQLITE_WAIT_MS', '51'],
      ['DELIVERY_BATCH_MS', '1001'],
    ];
    for (const [name, value] of cases) {
      it(`reports ${name}=${value}`, () => {
        expect(problemsOf({ [name]: value })).toContain(name);
      });
    }

    it('reports a header timeout longer than the request timeout (Node refuses it)', () => {
      const problems = problemsOf({ BODY_TIMEOUT_MS: '5000', HEADERS_TIMEOUT_MS: '6000' });
      expect(problems).toContain('HEADERS_TIMEOUT_MS');
      expect(problems).toContain('BODY_TIMEOUT_MS');
    });

    it('reports METRICS_PORT equal to PORT', () => {
      expect(problemsOf({ PORT: '8080', METRICS_PORT: '8080' })).toContain('METRICS_PORT');
    });
  });
});

describe('rateLimitWindow', () => {
  it('turns SEND_RATE and SEND_BURST into a window holding the burst', () => {
    expect(rateLimitWindow(defaults)).toEqual({ limit: 20, windowMs: 4_000 });
    expect(rateLimitWindow({ sendRatePerSec: 1, sendBurst: 10 })).toEqual({
      limit: 10,
      windowMs: 10_000,
    });
  });

  it('keeps the window at least a second long, and the average rate', () => {
    expect(rateLimitWindow({ sendRatePerSec: 50, sendBurst: 5 })).toEqual({
      limit: 50,
      windowMs: 1_000,
    });
  });

  it('is off with SEND_RATE=0', () => {
    expect(rateLimitWindow({ sendRatePerSec: 0, sendBurst: 20 })).toBeUndefined();
  });
});

describe('trustProxyWarning', () => {
  it('warns about TRUST_PROXY=true on all interfaces', () => {
    for (const host of [undefined, '0.0.0.0', '::']) {
      expect(trustProxyWarning({ trustProxy: true, host, port: 3000 }), String(host)).toMatch(
        /TRUST_PROXY=true while listening on all interfaces/,
      );
    }
  });

  it('warns, more mildly, about TRUST_PROXY=true on one interface or a socket path', () => {
    for (const where of [
      { host: '127.0.0.1', port: 3000 },
      { host: undefined, port: '/run/chat.sock' },
    ]) {
      const warning = trustProxyWarning({ trustProxy: true, ...where });
      expect(warning, JSON.stringify(where)).toMatch(/forged address/);
      expect(warning).not.toMatch(/all interfaces/);
    }
  });

  it('is quiet when TRUST_PROXY names the proxy or counts hops', () => {
    for (const trustProxy of [false, 'loopback', '10.0.0.0/8', 1]) {
      expect(trustProxyWarning({ trustProxy, host: undefined, port: 3000 })).toBe(undefined);
    }
  });
});
