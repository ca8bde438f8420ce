/**
 * Starts a real chat server on 127.0.0.1, port 0, for a test, and gives it
 * small typed HTTP helpers over real sockets (global fetch).
 */

import type { RecvAnswer, SendAnswer } from '../../protocol/protocol.ts';
import { type Config, defaults } from '../../server/core/config.ts';
import { silentLog } from '../../server/core/log.ts';
import { type ChatParts, type RunningChat, startChat } from '../../server/process/server.ts';
import { MemoryStore } from '../../server/store/memory-store.ts';

export interface TestChat extends RunningChat {
  get(path: string, init?: RequestInit): Promise<Response>;
  post(path: string, body: unknown, init?: RequestInit): Promise<Response>;
  recv(query: string, init?: RequestInit): Promise<RecvBody>;
  send(fields: Record<string, string>): Promise<SendBody>;
}

/** The wire types, under the names the suites use. */
export type RecvBody = RecvAnswer;
export type SendBody = SendAnswer;

export const testConfig = (overrides: Partial<Config> = {}): Config => ({
  ...defaults,
  port: 0,
  host: '127.0.0.1',
  databaseUrl: 'memory:',
  pollTimeoutMs: 5_000,
  sendRatePerSec: 0,
  // The per-address budgets are off, as the send rate: their own suites turn them on.
  sendKbPerHour: 0,
  historyRatePerSec: 0,
  serveStatic: false,
  logLevel: 'error',
  ...overrides,
});

export async function startTestChat(
  overrides: Partial<Config> = {},
  parts: ChatParts = {},
): Promise<TestChat> {
  const chat = await startChat(testConfig(overrides), {
    store: new MemoryStore(),
    log: silentLog,
    ...parts,
  });
  const get = (path: string, init?: RequestInit) => fetch(chat.url + path, init);
  const post = (path: string, body: unknown, init?: RequestInit) =>
    fetch(chat.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      ...init,
    });
  return {
    ...chat,
    get,
    post,
    async recv(query, init) {
      const res = await get(`/recv?${query}`, init);
      if (res.status !== 200)
        throw new Error(`GET /recv?${query}: ${res.status} ${await res.text()}`);
      return (await res.json()) as RecvBody;
    },
    async send(fields) {
      const res = await post('/send', fields);
      if (res.status !== 200) throw new Error(`POST /send: ${res.status} ${await res.text()}`);
      return (await res.json()) as SendBody;
    },
  };
}

export { until } from './wait.ts';
