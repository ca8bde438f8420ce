import { describe, expect, it } from 'vitest';
import { ConfigError, defaults, loadConfig } from '../server/config.ts';

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
      sendRatePerSec: 0,
      trustProxy: 'loopback',
      allowedOrigins: ['https://a.example', 'https://b.example'],
      serveStatic: false,
    });
    expect(loadConfig({ WORKERS: 'auto' }).workers).toBeGreaterThanOrEqual(1);
  });

  it('reports every bad value at once', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: '70000',
        POLL_TIMEOUT_MS: 'soon',
        DATABASE_URL: 'postgres://x',
        WORKERS: '0',
        SERVE_STATIC: 'maybe',
        LOG_LEVEL: 'loud',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of [
      'PORT',
      'POLL_TIMEOUT_MS',
      'DATABASE_URL',
      'WORKERS',
      'SERVE_STATIC',
      'LOG_LEVEL',
    ]) {
      expect(problems).toContain(name);
    }
  });
});
