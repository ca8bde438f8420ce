import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type ConfigError, loadConfig } from '../../server/core/config.ts';
import { startTestChat, type TestChat } from '../helpers/chat.ts';
import { errorCode, exchange, parseAnswers, portOf } from '../helpers/raw-http.ts';

let chat: TestChat | undefined;
afterEach(async () => {
  await chat?.close();
  chat = undefined;
});

async function withHost(host: string, path = '/time') {
  const result = await exchange(
    portOf(chat!.url),
    `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
  );
  return parseAnswers(result.text)[0]!;
}

describe('GET /metrics', () => {
  describe('on the chat port', () => {
    it("carries the API's security headers", async () => {
      chat = await startTestChat();
      const res = await chat.get('/metrics');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cross-origin-resource-policy')).toBe('same-origin');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(res.headers.get('cache-control')).toBe('no-store');
    });
  });

  describe('with METRICS_PORT and METRICS_HOST', () => {
    it('listens on that interface only, with the same headers', async () => {
      chat = await startTestChat({ metricsPort: 0, metricsHost: '127.0.0.2' });
      const address = chat.ops.metricsServer!.address() as AddressInfo;
      expect(address.address).toBe('127.0.0.2');
      const res = await fetch(`http://127.0.0.2:${address.port}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect((await chat.get('/metrics')).status).toBe(404);
    });
  });
});

describe('ALLOWED_HOSTS', () => {
  describe('when it is set', () => {
    it('answers the hosts it names, with or without a port, and their subdomains for *.', async () => {
      chat = await startTestChat({ allowedHosts: ['chat.example', '*.example.org', '127.0.0.1'] });
      expect((await withHost('chat.example')).status).toBe(200);
      expect((await withHost('CHAT.example:3000')).status).toBe(200);
      expect((await withHost('a.example.org')).status).toBe(200);
      expect((await withHost('127.0.0.1:8080', '/history')).status).toBe(200);
    });

    it('refuses any other host with a JSON 421 (DNS rebinding)', async () => {
      chat = await startTestChat({ allowedHosts: ['chat.example'] });
      for (const host of ['rebind.attacker.example', 'example.org', 'chat.example.evil']) {
        const answer = await withHost(host, '/history');
        expect([answer.status, errorCode(answer)]).toEqual([421, 'host_not_allowed']);
      }
    });
  });

  describe('when it is not set', () => {
    it('answers only loopback names on a loopback bind (test/net/request-target.test.ts)', async () => {
      chat = await startTestChat();
      expect((await withHost('localhost')).status).toBe(200);
      expect((await withHost('anything.example')).status).toBe(421);
    });
  });
});

describe('the new settings', () => {
  it('are validated with the others', () => {
    const problems = (env: Record<string, string>): string[] => {
      try {
        loadConfig(env);
        return [];
      } catch (error) {
        return (error as ConfigError).problems;
      }
    };
    expect(problems({ METRICS_HOST: '127.0.0.1' })).toEqual([
      'METRICS_HOST needs METRICS_PORT: on the chat port, /metrics binds HOST',
    ]);
    expect(problems({ ALLOWED_HOSTS: 'chat.example:3000' })[0]).toMatch(
      /ALLOWED_HOSTS has a bad host/,
    );
    expect(problems({ MAX_PIPELINED: '0' })[0]).toMatch(/MAX_PIPELINED must be an integer/);
    expect(problems({ MAX_CONNECTIONS: 'many' })[0]).toMatch(/MAX_CONNECTIONS must be an integer/);
    const config = loadConfig({
      METRICS_PORT: '9464',
      METRICS_HOST: '127.0.0.1',
      ALLOWED_HOSTS: 'Chat.Example, *.example.org',
      MAX_CONNECTIONS: 'auto',
      MAX_CONNECTIONS_PER_ADDRESS: '64',
    });
    expect(config).toMatchObject({
      metricsHost: '127.0.0.1',
      allowedHosts: ['chat.example', '*.example.org'],
      maxConnections: undefined,
      maxConnectionsPerAddress: 64,
    });
  });
});
