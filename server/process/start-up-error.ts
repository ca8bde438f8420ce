/**
 * What to tell a person whose chat did not start. The usual mistakes (a
 * port already taken, a MySQL database that does not exist, a store that
 * cannot be reached) get one line that says what to do; a stack trace
 * would only hide that line, so it is printed at `LOG_LEVEL=debug` only.
 * Anything else is a bug, and keeps its stack.
 */
import type { Config } from '../core/config.ts';

/** The one line for a known start-up mistake, or undefined for anything else. */
export function startUpProblem(
  error: unknown,
  config: Pick<Config, 'port' | 'databaseUrl'>,
): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  const where = typeof config.port === 'number' ? `port ${config.port}` : config.port;
  if (code === 'EADDRINUSE') {
    return `${where} is in use: stop what listens there, or set PORT to another port`;
  }
  if (code === 'EACCES' && typeof config.port === 'number') {
    return `${where} needs privileges this process does not have: set PORT to 1024 or above`;
  }
  const store = storeName(config.databaseUrl);
  if (code === 'ER_BAD_DB_ERROR' && store) {
    const database = store.url.pathname.slice(1);
    return `MySQL at ${store.host} has no database "${database}": create it (CREATE DATABASE \`${database}\`) or fix DATABASE_URL`;
  }
  if (code === 'ER_ACCESS_DENIED_ERROR' && store) {
    return `MySQL at ${store.host} refused the user or password of DATABASE_URL: fix DATABASE_URL`;
  }
  if ((error as Error | null)?.name === 'StoreUnavailableError' && store) {
    const { cause, message } = error as Error;
    const why = cause instanceof Error ? cause.message : message;
    return `cannot reach ${store.kind} at ${store.host} (${why}): start it, or fix DATABASE_URL`;
  }
  return undefined;
}

/** The store a server URL names, without its user or password (the line goes to a log). */
function storeName(databaseUrl: string): { kind: string; host: string; url: URL } | undefined {
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    return undefined;
  }
  const kind = { 'mysql:': 'MySQL', 'mongodb:': 'MongoDB', 'mongodb+srv:': 'MongoDB' }[
    url.protocol
  ];
  return kind === undefined ? undefined : { kind, host: url.host, url };
}
