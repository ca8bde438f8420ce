/**
 * A small leveled logger: one line per event on stderr. 5xx errors are logged
 * as errors; 4xx answers are the client's business and are not logged.
 */
import type { Config } from './config.ts';

export type LogLevel = Config['logLevel'];
export type Log = (level: LogLevel, message: string, error?: unknown) => void;

const rank: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

export function createLog(level: LogLevel, prefix = ''): Log {
  return (at, message, error) => {
    if (rank[at] > rank[level]) return;
    const detail =
      error instanceof Error
        ? ` ${error.stack ?? error.message}`
        : error
          ? ` ${String(error)}`
          : '';
    process.stderr.write(
      `${new Date().toISOString()} ${at.toUpperCase()} ${prefix}${message}${detail}\n`,
    );
  };
}

export const silentLog: Log = () => {};
