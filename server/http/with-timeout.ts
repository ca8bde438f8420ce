import { StoreUnavailableError } from '../store/store.ts';

/**
 * Rejects with `StoreUnavailableError` when `work` takes longer than `ms`:
 * a database that stops answering must not hang the request. The work itself
 * goes on; callers that care (a late append) still see its result.
 */
export function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new StoreUnavailableError(`${what} took longer than ${ms} ms`)),
      ms,
    );
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
