/**
 * What the two nginx suites (nginx.test.ts for the compose file,
 * linux-nginx.test.ts for the host's site file) do alike: a chat with a
 * real nginx in front, and the checks both files must pass through it. Each
 * suite keeps only what differs: how its chat is started (in-process with
 * TRUST_PROXY=1, or the built chat with chat.service's settings) and how its
 * nginx file is run (nginx.ts).
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import type { RecvAnswer, SendAnswer } from '../../protocol/protocol.ts';
import { until } from '../helpers/chat.ts';
import { apiRoutes } from './api-routes.ts';
import { type HttpAnswer, http, postJson } from './http.ts';
import type { RunningNginx, TlsFiles } from './nginx.ts';

const run = promisify(execFile);

/** A chat as the suites see it: its URL, its own count of waiting polls, and a close. */
export interface ProxiedChat {
  readonly hub: { readonly waiting: number };
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
  return until(() => chat.hub.waiting === count, `${count} waiting polls`, timeoutMs);
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

/** The twelve headers helmet gives the chat's own static files, which nginx must give them too. */
export const STATIC_SECURITY_HEADERS = [
  'content-security-policy',
  'cross-origin-opener-policy',
  'cross-origin-resource-policy',
  'origin-agent-cluster',
  'referrer-policy',
  'strict-transport-security',
  'x-content-type-options',
  'x-dns-prefetch-control',
  'x-download-options',
  'x-frame-options',
  'x-permitted-cross-domain-policies',
  'x-xss-protection',
] as const;

/** Each of those headers as nginx sends it, next to the chat's own (which must send them all). */
export function expectSameSecurityHeaders(fromNginx: HttpAnswer, fromNode: HttpAnswer): void {
  for (const name of STATIC_SECURITY_HEADERS) {
    expect({ [name]: typeof fromNode.headers[name] }).toEqual({ [name]: 'string' });
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

/** A certificate for `host`, made here, and what certbot puts beside it. */
export interface TestTls extends TlsFiles {
  dir: string;
}

/**
 * What certbot would put under /etc/letsencrypt, made here: a self-signed
 * certificate for `host` (`openssl req -x509`), certbot's
 * options-ssl-nginx.conf as its nginx plugin ships it, and the RFC 7919
 * ffdhe2048 group, which is what certbot's ssl-dhparams.pem holds.
 */
export async function makeTlsFiles(host: string): Promise<TestTls> {
  const dir = await mkdtemp(join(tmpdir(), 'chat-tls-'));
  const files = {
    dir,
    fullchain: join(dir, 'fullchain.pem'),
    privkey: join(dir, 'privkey.pem'),
    options: join(dir, 'options-ssl-nginx.conf'),
    dhparam: join(dir, 'ssl-dhparams.pem'),
  };
  const openssl = (...args: string[]) => run('openssl', args);
  await openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    `/CN=${host}`,
    '-addext',
    `subjectAltName=DNS:${host}`,
    '-keyout',
    files.privkey,
    '-out',
    files.fullchain,
  );
  await openssl(
    'genpkey',
    '-genparam',
    '-algorithm',
    'DH',
    '-pkeyopt',
    'group:ffdhe2048',
    '-out',
    files.dhparam,
  );
  await writeFile(
    files.options,
    [
      'ssl_session_cache shared:le_nginx_SSL:10m;',
      'ssl_session_timeout 1440m;',
      'ssl_session_tickets off;',
      'ssl_protocols TLSv1.2 TLSv1.3;',
      'ssl_prefer_server_ciphers off;',
      'ssl_ciphers "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384";',
      '',
    ].join('\n'),
  );
  return files;
}

export interface Http2Target {
  /** The name the certificate is for; curl resolves it to 127.0.0.1. */
  host: string;
  port: number;
  cacert: string;
  /** Where curl writes the two answers. */
  dir: string;
}

/**
 * One `curl --http2 --parallel` with two transfers, multiplexed on one
 * connection: a poll, and a send whose body comes from curl's stdin, written
 * only once the chat holds the poll. Both must complete over HTTP/2 with 200,
 * the second without a connection of its own, and the poll must carry the
 * message the send stored.
 */
export async function expectPollAndSendOnOneHttp2Connection(
  chat: ProxiedChat,
  target: Http2Target,
): Promise<void> {
  const origin = `https://${target.host}:${target.port}`;
  const common = (out: string) => [
    '--silent',
    '--no-progress-meter',
    '--show-error',
    '--http2',
    '--cacert',
    target.cacert,
    '--resolve',
    `${target.host}:${target.port}:127.0.0.1`,
    '--output',
    join(target.dir, out),
    '--write-out',
    `${out} %{http_version} %{http_code} %{num_connects}\n`,
  ];
  const curl = spawn(
    'curl',
    [
      '--parallel',
      ...common('poll'),
      `${origin}/recv?room=h2&since=0`,
      '--next',
      ...common('send'),
      '--header',
      'content-type: application/json',
      '--request',
      'POST',
      '--upload-file',
      '-',
      `${origin}/send`,
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  curl.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  curl.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = once(curl, 'exit');

  await waitingPolls(chat, 1);
  curl.stdin.end(JSON.stringify({ room: 'h2', text: 'over HTTP/2' }));
  const [code] = await exited;
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });

  // Both over HTTP/2 with status 200; only the first opened a connection.
  expect(stdout.trim().split('\n').sort()).toEqual(['poll 2 200 1', 'send 2 200 0']);
  const poll = JSON.parse(await readFile(join(target.dir, 'poll'), 'utf8')) as RecvAnswer;
  const send = JSON.parse(await readFile(join(target.dir, 'send'), 'utf8')) as SendAnswer;
  expect(poll.messages.map((m) => m.text)).toEqual(['over HTTP/2']);
  expect(poll.cursor).toBe(send.id);
}

/** Loopback addresses the many-poll checks spread their clients over: 127.0.0.2 to 127.0.0.60. */
export const CLIENT_ADDRESSES = 59;
const clientAddress = (i: number) => `127.0.0.${2 + (i % CLIENT_ADDRESSES)}`;
/** Polls opened at once before waiting for the chat to hold them: below nginx's listen backlog (511). */
const BATCH = 250;

/**
 * `count` real waiting polls through nginx, from clients spread over
 * CLIENT_ADDRESSES, opened in batches, each batch waited for until the chat
 * holds it; then one send through nginx must answer every one with its
 * message, and nginx's error log must hold no sign of running out of
 * connections or files. Returns how long the polls took to be held, and the
 * send to answer them all.
 */
export async function expectHoldsWaitingPolls(
  { chat, nginx }: { chat: ProxiedChat; nginx: RunningNginx },
  count: number,
): Promise<{ heldMs: number; answeredMs: number }> {
  const started = Date.now();
  const polls: Promise<HttpAnswer>[] = [];
  for (let i = 0; i < count; i += 1) {
    polls.push(http(`${nginx.url}/recv?room=crowd&since=0`, { localAddress: clientAddress(i) }));
    if (polls.length % BATCH === 0 || polls.length === count) {
      await waitingPolls(chat, polls.length, 30_000);
    }
  }
  const heldMs = Date.now() - started;

  const sentAt = Date.now();
  const sent = await postJson(`${nginx.url}/send`, { room: 'crowd', text: 'to everyone' });
  expect(sent.status).toBe(200);
  const { id } = sent.json<SendAnswer>();
  const answers = await Promise.all(polls);
  const answeredMs = Date.now() - sentAt;

  const outcomes = new Map<string, number>();
  for (const answer of answers) {
    const body = answer.status === 200 ? answer.json<RecvAnswer>() : undefined;
    const outcome =
      body?.cursor === id && body.messages.map((m) => m.text).join() === 'to everyone'
        ? 'the message'
        : `${answer.status} ${answer.text.slice(0, 80)}`;
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  }
  expect(Object.fromEntries(outcomes)).toEqual({ 'the message': count });
  expect(chat.hub.waiting).toBe(0);
  expect(await nginx.errorLog()).not.toMatch(
    /worker_connections are not enough|Too many open files|\[(alert|crit|emerg)\]/,
  );
  return { heldMs, answeredMs };
}
