/**
 * How the log reads: JSON lines for a machine, or lines for a person.
 *
 * - `json`: one JSON object per line, every request included: what systemd's
 *   journal, IIS, docker compose, CI and every log collector want.
 * - `pretty`: for a person at a terminal. Start and stop, warnings and
 *   errors (with the stack under them) as one readable line each; the
 *   request lines are counted instead of printed, and a summary of them
 *   comes once per `summaryMs` (when there were any).
 *
 * `LOG_FORMAT` chooses; without it, `pretty` when the log's own stream is a
 * terminal, `json` otherwise (a pipe, a file, a service manager). Pino still
 * builds the JSON in both: the pretty stream reads it back, so what a line
 * says is the same either way.
 */
import { writeSync } from 'node:fs';
import type { DestinationStream } from 'pino';

export type LogFormat = 'json' | 'pretty';

/** The format of a log written to `stream`: the setting, else pretty only on a terminal. */
export function chooseLogFormat(
  setting: LogFormat | undefined,
  stream: { isTTY?: boolean | undefined },
): LogFormat {
  return setting ?? (stream.isTTY === true ? 'pretty' : 'json');
}

/** Fields a person does not need on every line (the time is shown; the rest is the same each time). */
const QUIET = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'err', 'reqId']);

export interface PrettyLogOptions {
  /** Writes formatted text (synchronously: the process may exit right after). */
  write(text: string): void;
  /** How often the request summary comes (ms); 0: never by itself. @default 60_000 */
  summaryMs?: number;
}

/** What the request lines since the last summary said. */
interface Tally {
  requests: number;
  polls: number;
  sends: number;
  clientErrors: number;
  serverErrors: number;
  aborted: number;
}

const emptyTally = (): Tally => ({
  requests: 0,
  polls: 0,
  sends: 0,
  clientErrors: 0,
  serverErrors: 0,
  aborted: 0,
});

/** A pino destination that writes lines for a person (see the top of this file). */
export class PrettyLog implements DestinationStream {
  readonly #options: PrettyLogOptions;
  readonly #timer: ReturnType<typeof setInterval> | undefined;
  #tally = emptyTally();
  #since = Date.now();
  #prefix = '';

  constructor(options: PrettyLogOptions) {
    this.#options = options;
    const every = options.summaryMs ?? 60_000;
    if (every > 0) {
      this.#timer = setInterval(() => this.summary(), every);
      this.#timer.unref();
    }
  }

  /** One JSON line from pino. */
  write(line: string): void {
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      this.#options.write(line.endsWith('\n') ? line : `${line}\n`);
      return;
    }
    const level = String(entry.level ?? 'info');
    if (isRequestLine(entry) && level !== 'error') {
      this.#count(entry);
      return;
    }
    this.#options.write(formatEntry(entry));
  }

  /** Writes the summary of the request lines counted since the last one, if there were any. */
  summary(): void {
    const tally = this.#tally;
    const seconds = Math.max(1, Math.round((Date.now() - this.#since) / 1_000));
    this.#tally = emptyTally();
    this.#since = Date.now();
    if (tally.requests === 0) return;
    const count = new Intl.NumberFormat('en');
    const parts = [
      `${count.format(tally.requests)} ${tally.requests === 1 ? 'request' : 'requests'} in ${seconds} s`,
      `${count.format(tally.polls)} polls answered`,
      `${count.format(tally.sends)} sends`,
    ];
    if (tally.clientErrors > 0) parts.push(`${count.format(tally.clientErrors)} refused (4xx)`);
    if (tally.serverErrors > 0) parts.push(`${count.format(tally.serverErrors)} failed (5xx)`);
    if (tally.aborted > 0) parts.push(`${count.format(tally.aborted)} left before the answer`);
    const text = `${this.#prefix}${parts.join(', ')} (LOG_FORMAT=json shows each one)`;
    this.#options.write(formatEntry({ level: 'info', time: new Date().toISOString(), msg: text }));
  }

  /** Stops the summary timer (tests; the process's own log lives as long as it does). */
  close(): void {
    clearInterval(this.#timer);
  }

  #count(entry: Record<string, unknown>): void {
    const tally = this.#tally;
    tally.requests += 1;
    if (entry.path === '/recv') tally.polls += 1;
    if (entry.path === '/send') tally.sends += 1;
    const status = Number(entry.status);
    if (status === 0) tally.aborted += 1;
    else if (status >= 500) tally.serverErrors += 1;
    else if (status >= 400) tally.clientErrors += 1;
    // The worker's prefix, so a summary says whose requests it counts.
    const message = String(entry.msg ?? '');
    const prefix = /^(worker \d+: |primary: )/.exec(message);
    this.#prefix = prefix ? prefix[0] : '';
  }
}

/** A request's own line (server/metrics/request-log.ts): method, path and status. */
function isRequestLine(entry: Record<string, unknown>): boolean {
  return (
    typeof entry.method === 'string' &&
    typeof entry.path === 'string' &&
    typeof entry.status === 'number'
  );
}

/** "20:58:16 WARN  the store is unavailable  error=connect ECONNREFUSED", and a stack under it. */
export function formatEntry(entry: Record<string, unknown>): string {
  const time = typeof entry.time === 'string' ? entry.time.slice(11, 19) : '';
  const level = String(entry.level ?? 'info').toUpperCase();
  const extras: string[] = [];
  for (const [key, value] of Object.entries(entry)) {
    if (QUIET.has(key) || value === undefined) continue;
    extras.push(`${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  }
  let text = `${time} ${level.padEnd(5)} ${String(entry.msg ?? '')}`;
  if (extras.length > 0) text += `  ${extras.join(' ')}`;
  const err = entry.err as { stack?: unknown; message?: unknown } | undefined;
  if (err && typeof err === 'object') {
    const stack = typeof err.stack === 'string' ? err.stack : String(err.message ?? '');
    text += `\n${stack
      .split('\n')
      .map((line) => `    ${line.trim()}`)
      .join('\n')}`;
  }
  return `${text}\n`;
}

/** The destination for a process's log in `format`: undefined is pino's own JSON on stderr. */
export function logDestination(format: LogFormat): DestinationStream | undefined {
  if (format === 'json') return undefined;
  return new PrettyLog({ write: (text) => writeSync(2, text) });
}
