/**
 * How the log reads (server/core/log-format.ts): the choice of format, the
 * pretty lines through a real pino logger and stream, and the built chat's
 * JSON when its log goes to a pipe (a terminal is hard to fake here: the
 * choice itself is tested with both answers of `isTTY`).
 */
import { PassThrough } from 'node:stream';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLog } from '../../server/core/log.ts';
import { chooseLogFormat, PrettyLog } from '../../server/core/log-format.ts';
import { baseEnv, type ChatProcess, startChatProcess } from '../deploy/chat-process.ts';
import { ensureBuilt, MAIN_JS, ROOT } from '../helpers/build.ts';

describe('chooseLogFormat', () => {
  it('is pretty on a terminal and JSON anywhere else, unless LOG_FORMAT says', () => {
    expect(chooseLogFormat(undefined, { isTTY: true })).toBe('pretty');
    expect(chooseLogFormat(undefined, { isTTY: false })).toBe('json');
    expect(chooseLogFormat(undefined, {})).toBe('json');
    expect(chooseLogFormat('json', { isTTY: true })).toBe('json');
    expect(chooseLogFormat('pretty', { isTTY: false })).toBe('pretty');
  });
});

describe('PrettyLog', () => {
  let pretty: PrettyLog | undefined;
  afterEach(() => pretty?.close());

  /** A real pino logger writing through the pretty stream into a real stream we read. */
  function prettyLog() {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    pretty = new PrettyLog({ write: (line) => out.write(line), summaryMs: 0 });
    const log = createLog('info', 'worker 7: ', pretty);
    return { log, pretty, text: () => text };
  }

  it('writes start, warnings and errors as readable lines, the stack under an error', async () => {
    const { log, text } = prettyLog();
    log('info', 'listening on http://127.0.0.1:3000');
    log('warn', 'the store is unavailable', new Error('connect ECONNREFUSED'), { store: 'mysql' });
    log('error', 'posting main#3 failed', new Error('boom'));
    await new Promise((resolve) => setImmediate(resolve));
    const lines = text().split('\n');
    expect(lines[0]).toMatch(
      /^\d\d:\d\d:\d\d INFO {2}worker 7: listening on http:\/\/127\.0\.0\.1:3000$/,
    );
    expect(lines[1]).toMatch(
      /^\d\d:\d\d:\d\d WARN {2}worker 7: the store is unavailable {2}store=mysql error=connect ECONNREFUSED$/,
    );
    expect(lines[2]).toMatch(/^\d\d:\d\d:\d\d ERROR worker 7: posting main#3 failed$/);
    expect(lines[3]).toBe('    Error: boom');
    expect(lines[4]).toMatch(/^ {4}at /);
    expect(text()).not.toContain('{');
  });

  it('counts the request lines instead of printing them, and sums them up', async () => {
    const { log, pretty, text } = prettyLog();
    const request = (method: string, path: string, status: number) =>
      log('info', `${method} ${path} ${status}`, undefined, { method, path, status, ms: 3 });
    request('GET', '/recv', 200);
    request('GET', '/recv', 200);
    request('POST', '/send', 200);
    request('POST', '/send', 429);
    request('GET', '/recv', 0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(text()).toBe('');
    pretty.summary();
    expect(text()).toMatch(
      /^\d\d:\d\d:\d\d INFO {2}worker 7: 5 requests in \d+ s, 3 polls answered, 2 sends, 1 refused \(4xx\), 1 left before the answer \(LOG_FORMAT=json shows each one\)\n$/,
    );
    // Nothing since: no summary.
    pretty.summary();
    expect(text().split('\n')).toHaveLength(2);
  });

  it('still prints a request line logged as an error (a bug: a 500)', async () => {
    const { log, text } = prettyLog();
    log('error', 'POST /send 500', new Error('bug'), {
      method: 'POST',
      path: '/send',
      status: 500,
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(text()).toMatch(
      /ERROR worker 7: POST \/send 500 {2}method=POST path=\/send status=500\n {4}Error: bug/,
    );
  });
});

describe('the built chat', () => {
  beforeAll(ensureBuilt, 180_000);
  let running: ChatProcess | undefined;
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });

  const start = (env: Record<string, string> = {}) =>
    startChatProcess({
      command: process.execPath,
      args: [MAIN_JS],
      cwd: ROOT,
      env: { ...baseEnv(), DATABASE_URL: 'memory:', LOG_LEVEL: 'info', PORT: '0', ...env },
    });

  it('logs JSON lines when its log goes to a pipe (systemd, compose, CI)', async () => {
    running = await start();
    const first = running.output().split('\n')[0]!;
    expect(JSON.parse(first)).toMatchObject({ level: 'info' });
  });

  it('logs for a person with LOG_FORMAT=pretty, even to a pipe', async () => {
    running = await start({ LOG_FORMAT: 'pretty' });
    expect(running.output()).toMatch(/^\d\d:\d\d:\d\d INFO {2}.*listening on http:/m);
    expect(running.output()).not.toMatch(/^\{/m);
  });
});
