import { raceDeadline } from '../core/deadline.ts';
import { StoreUnavailableError } from '../store/store.ts';

/**
 * Rejects with `StoreUnavailableError` when `work` takes longer than `ms`:
 * a database that stops answering must not hang the request. The race is
 * the one of server/core/deadline.ts.
 */
export function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  return raceDeadline(
    work,
    ms,
    () => new StoreUnavailableError(`${what} took longer than ${ms} ms`),
  );
}
