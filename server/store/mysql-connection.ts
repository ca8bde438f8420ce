/**
 * How the MySQL store borrows a pooled connection, and which errors mean
 * "the database cannot be reached now" (a 503) rather than "this statement
 * is wrong" (a bug, a 500).
 */
import type { Pool, PoolConnection } from 'mysql2/promise';

/**
 * Every statement's limit. A refused or reset connection fails at once, but a
 * server that stops answering (a network partition) would hold the
 * connection, and with it its room's writes, for the minutes TCP takes to
 * notice. Past this the connection is dropped and the server rolls back.
 */
export const STATEMENT_TIMEOUT_MS = 5_000;

/**
 * Runs `work` on a pooled connection. On failure the connection is rolled
 * back, or dropped when it may be dead or still busy with a statement that
 * timed out (closing the session rolls back its transaction on the server).
 */
export async function withConnection<T>(
  pool: Pool,
  work: (conn: PoolConnection) => Promise<T>,
): Promise<T> {
  const conn = await pool.getConnection();
  try {
    return await work(conn);
  } catch (error) {
    if (isUnavailable(error)) conn.destroy();
    else await conn.query('ROLLBACK').catch(() => conn.destroy());
    throw error;
  } finally {
    conn.release();
  }
}

/** Server errors that mean "not now" rather than "this request is wrong". */
const transientCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_TOO_MANY_USER_CONNECTIONS',
  'ER_SERVER_SHUTDOWN',
  'ER_LOCK_WAIT_TIMEOUT',
  'ER_LOCK_DEADLOCK',
  'ER_OPTION_PREVENTS_STATEMENT', // a read-only replica after a failover
]);

/** mysql2's own messages for a closed pool or a connection that died between two commands. */
const transientMessages =
  /Pool is closed|closed state|Queue limit reached|No connections available/;

export function isUnavailable(error: unknown): boolean {
  const { code, fatal, message } = error as { code?: unknown; fatal?: unknown; message?: unknown };
  if (fatal === true) return true;
  if (typeof code === 'string' && transientCodes.has(code)) return true;
  return typeof message === 'string' && transientMessages.test(message);
}
