/**
 * A real pino log (server/core/log.ts) whose JSON lines a test reads back: what an
 * operator's log collector would get, parsed.
 */
import { createLog, type Log, type LogLevel } from '../../server/core/log.ts';
import { until } from '../helpers/chat.ts';

export interface LogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

export interface CapturedLog {
  readonly log: Log;
  readonly lines: LogLine[];
  /** Everything written, as the raw text of the lines. */
  readonly text: string;
  /** Resolves with the first line (already written or to come) that `match` accepts. */
  next(match: (line: LogLine) => boolean, what: string): Promise<LogLine>;
}

export function captureLog(level: LogLevel = 'info', prefix = ''): CapturedLog {
  const lines: LogLine[] = [];
  let text = '';
  const destination = {
    write(chunk: string) {
      text += chunk;
      for (const line of chunk.split('\n')) if (line) lines.push(JSON.parse(line) as LogLine);
    },
  };
  return {
    log: createLog(level, prefix, destination),
    lines,
    get text() {
      return text;
    },
    async next(match, what) {
      await until(() => lines.some(match), what);
      return lines.find(match)!;
    },
  };
}
