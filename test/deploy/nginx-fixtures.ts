/**
 * What the two nginx suites (nginx.test.ts for the compose file,
 * linux-nginx.test.ts for the host's site file) do alike: a chat with a
 * real nginx in front, and the checks both files must pass through it. Each
 * suite keeps only what differs: how its chat is started (in-process with
 * TRUST_PROXY=1, or the built chat with chat.service's settings) and how its
 * nginx file is run (nginx.ts).
 */
import { expect } from 'vitest';
import type { RecvAnswer, SendAnswer } from '../../protocol/protocol.ts';
import { until } from '../helpers/chat.ts';
import { apiRoutes } from './api-routes.ts';
import { type HttpAnswer, http, postJson } from './http.ts';
import type { RunningNginx } from './nginx.ts';

/** A chat as the suites see it: its URL, its own count of waiting polls, and a close. */
export interface ProxiedChat {
  readonly waiters: { readonly size: number };
  close(): Promise<void>;
}

export interface Proxied<C extends ProxiedChat, N extends RunningNginx = RunningNginx> {
  chat: C;
  nginx: N;
  stop(): Promise<void>;
}

/** Starts the chat, then nginx in front of it; stops the chat if nginx does not start. */
export async function startProxied<C extends ProxiedChat, N extends RunningNginx = RunningNginx>(
  startChat: () => Promise<C>,
  startNginx: (chat: C) => Promise<N>,
): Promise<Proxied<C, N>> {
  const chat = await startChat();
  let nginx: N;
  try {
    nginx = await startNginx(chat);
  } catch (error) {
    await chat.close();
    throw error;
  }
  return {
    chat,
    nginx,
    async stop() {
      await nginx.stop();
      await chat.close();
    },
  };
}

/**
 * Resolves once the chat holds `count` waiting polls (its own count, not
 * asked through nginx): the polls have reached the chat.
 */
export function waitingPolls(chat: ProxiedChat, count: number, timeoutMs = 5_000): Promise<void> {
  return until(() => chat.waiters.size === count, `${count} waiting polls`, timeoutMs);
}

/** The body of `location <match> { … }` in an nginx file (no nested blocks). */
export function locationBlock(conf: string, match: string): string {
  const start = conf.indexOf(`location ${match} {`);
  if (start < 0) throw new Error(`no "location ${match}" in the nginx file`);
  return conf.slice(start, conf.indexOf('}', start));
}

/** `proxy_read_timeout` of `location = /recv`, in milliseconds. */
export function recvReadTimeoutMs(conf: string): number {
  const recv = locationBlock(conf, '= /recv');
  return Number(/proxy_read_timeout (\d+)s;/.exec(recv)?.[1]) * 1000;
}

/** The headers the chat gives its own static files, which nginx must give them too. */
export const STATIC_SECURITY_HEADERS = [
  'content-security-policy',
  'cross-origin-opener-policy',
  'cross-origin-resource-policy',
  'referrer-policy',
  'x-content-type-options',
  'x-frame-options',
] as const;

/** Each of those headers as nginx sends it, next to the chat's own. */
export function expectSameSecurityHeaders(fromNginx: HttpAnswer, fromNode: HttpAnswer): void {
  for (const name of STATIC_SECURITY_HEADERS) {
    expect({ [name]: fromNginx.headers[name] }).toEqual({ [name]: fromNode.headers[name] });
  }
}

/**
 * Every route of the chat app, through nginx, answers in JSON, which only the
 * chat does (nginx's own pages are HTML). An invalid room makes /recv and
 * /history answer at once.
 */
export async function expectEveryRouteReachesChat(nginx: RunningNginx): Promise<void> {
  for (const path of await apiRoutes()) {
    const answer = await http(`${nginx.url}${path}?room=!`);
    expect({ path, type: answer.headers['content-type'] }).toEqual({
      path,
      type: 'application/json; charset=utf-8',
    });
  }
}

/** `/metrics` (with or without a query) ends at nginx's HTML 404. */
export async function expectMetricsRefused(nginx: RunningNginx): Promise<void> {
  for (const path of ['/metrics', '/metrics?x=1']) {
    const answer = await http(`${nginx.url}${path}`);
    expect({ path, status: answer.status, type: answer.headers['content-type'] }).toEqual({
      path,
      status: 404,
      type: 'text/html',
    });
  }
}

/** A body over 16 KB gets the chat's JSON 413, not nginx's HTML one. */
export async function expectChatRefusesLargeBody(nginx: RunningNginx): Promise<void> {
  const tooLarge = await postJson(`${nginx.url}/send`, { text: 'x'.repeat(20 * 1024) });
  expect(tooLarge.status).toBe(413);
  expect(tooLarge.json()).toMatchObject({ error: { code: 'body_too_large' } });
}

/** A poll waits in the chat until a send through nginx answers it with that message. */
export async function expectHeldPollAnswered(
  chat: ProxiedChat,
  nginx: RunningNginx,
  room: string,
): Promise<void> {
  const poll = http(`${nginx.url}/recv?room=${room}&since=0`);
  await waitingPolls(chat, 1);

  const sent = await postJson(`${nginx.url}/send`, { room, text: 'through nginx' });
  expect(sent.status).toBe(200);

  const answer = await poll;
  expect(answer.status).toBe(200);
  const body = answer.json<RecvAnswer>();
  expect(body.messages.map((m) => m.text)).toEqual(['through nginx']);
  expect(body.cursor).toBe(sent.json<SendAnswer>().id);
}

/** A visitor who goes away makes nginx close the upstream request, and the chat drops the poll. */
export async function expectLeavingVisitorDropsPoll(
  chat: ProxiedChat,
  nginx: RunningNginx,
  room: string,
): Promise<void> {
  const leave = new AbortController();
  const poll = http(`${nginx.url}/recv?room=${room}&since=0`, { signal: leave.signal });
  await waitingPolls(chat, 1);
  leave.abort();
  await expect(poll).rejects.toThrow(/abort/i);
  await waitingPolls(chat, 0);
}

/** A send from a chosen loopback address, as a distinct visitor to nginx. */
export function sendFrom(
  nginx: RunningNginx,
  localAddress: string,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  return postJson(`${nginx.url}/send`, { text: 'hi' }, { localAddress, headers });
}

/**
 * With one send per visitor and no refill (sendBurst 1), two visitors get a
 * budget each, though both reach the chat from nginx; a forged
 * X-Forwarded-For (one address, or a chain) does not give a visitor another.
 * Uses 127.0.0.2 to 127.0.0.4.
 */
export async function expectPerVisitorBudgets(nginx: RunningNginx): Promise<void> {
  expect((await sendFrom(nginx, '127.0.0.2')).status).toBe(200);
  expect((await sendFrom(nginx, '127.0.0.2')).status).toBe(429);
  expect((await sendFrom(nginx, '127.0.0.3')).status).toBe(200);
}

export async function expectForgedForwardedForRefused(nginx: RunningNginx): Promise<void> {
  expect((await sendFrom(nginx, '127.0.0.4')).status).toBe(200);
  for (const forged of ['203.0.113.9', '203.0.113.9, 198.51.100.7']) {
    const answer = await sendFrom(nginx, '127.0.0.4', { 'x-forwarded-for': forged });
    expect({ forged, status: answer.status }).toEqual({ forged, status: 429 });
  }
}
