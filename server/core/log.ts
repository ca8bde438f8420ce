/**
 * The log: JSON lines on stderr through pino, one object per event, for a
 * log collector to parse (docker, journald, Loki…); `npm run dev` pipes them
 * through pino-pretty to read them as a person.
 *
 * The rest of the server calls one small function, `log(level, message,
 * error?, fields?)`, so no module depends on pino's API. The pino logger
 * behind it is `log.logger`: the request log writes one line per finished
 * request with it (server/metrics/request-log.ts).
 *
 * What goes where:
 * - `error`: a bug or a failure that needs a person; the error's stack is kept.
 * - `warn`: a backend changed state (the store or Redis went away, came
 *   back), a suspicious setting. Only the error's message, no stack: an
 *   outage is logged once per change, not once per request.
 * - `info`: one line per request, start and stop. Message texts never appear
 *   at info or above.
 * - `debug`: more detail, for a person chasing a problem.
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.ts';

export type LogLevel = Config['logLevel'];
export type LogFields = Record<string, unknown>;

export interface Log {
  (level: LogLevel, message: string, error?: unknown, fields?: LogFields): void;
  /** The pino logger behind it (absent on a hand-written `Log`). */
  readonly logger?: Logger;
}

export interface LoggerOptions {
  /** Put before every message, e.g. `worker 1234: ` (the test helpers read it). */
  prefix?: string;
  /** Where the lines go; stderr when absent. Tests pass a stream they read. */
  destination?: DestinationStream;
}

/** A pino logger with the chat's settings: ISO times, level names, stderr. */
export function createLogger(level: LogLevel | 'silent', options: LoggerOptions = {}): Logger {
  return pino(
    {
      level,
      // `"level":"warn"` and an ISO time read better than 40 and epoch
      // milliseconds for a person grepping the raw lines, and every log
      // collector parses both.
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
      ...(options.prefix ? { msgPrefix: options.prefix } : {}),
    },
    // Synchronous: the process may `exit()` right after its last line.
    options.destination ?? pino.destination({ fd: 2, sync: true }),
  );
}

/** The chat's `Log` over a pino logger. */
export function logTo(logger: Logger): Log {
  const log = (level: LogLevel, message: string, error?: unknown, fields?: LogFields): void => {
    if (!logger.isLevelEnabled(level)) return;
    const detail: LogFields = { ...fields };
    if (error !== undefined) {
      if (level === 'error' && error instanceof Error) detail.err = error;
      else detail.error = error instanceof Error ? error.message : String(error);
    }
    logger[level](detail, message);
  };
  return Object.assign(log, { logger });
}

export function createLog(level: LogLevel, prefix = '', destination?: DestinationStream): Log {
  return logTo(createLogger(level, { prefix, destination }));
}

export const silentLog: Log = logTo(createLogger('silent'));

/** The pino logger of a `Log`; a silent one for a hand-written `Log`. */
export function loggerOf(log: Log): Logger {
  return log.logger ?? silentLog.logger!;
}
