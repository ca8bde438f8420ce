/**
 * The HTTP API of the chat, as the page uses it: one typed function per
 * route and one error type, `ApiError`, that says whether a retry can help.
 *
 * It uses `fetch` rather than `$.ajax`: a long poll must be abortable
 * (`AbortSignal`) and awaited, and fetch does both natively. jQuery stays
 * where it shines, in the DOM code (`view.ts`).
 */

import type {
  HistoryAnswer,
  Message,
  RecvAnswer,
  SendAnswer,
  TypingFields,
} from '../protocol/protocol.ts';

export type { Message, RecvAnswer, TypingFields };

export interface NewMessage {
  text: string;
  nickname: string;
  room: string;
  /** Idempotency key: a retry with the same key is stored once. */
  key: string;
  /** The browser's client id: its own share of the send limit behind a shared address. */
  client?: string;
}

/**
 * A failed call. `status` is 0 when no HTTP answer came (network down,
 * server restarting, request aborted by the watchdog).
 */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    /** From `Retry-After` on 429 and 503, in milliseconds. */
    readonly retryAfterMs: number | undefined = undefined,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** Network errors, 429 and 5xx may pass if tried again; other 4xx will not. */
  get retryable(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }
}

/** Longest a poll may take before we assume the connection died silently (sleep, NAT drop). */
const POLL_WATCHDOG_MS = 60_000;

/**
 * One long poll. `extra` adds to the query (e.g. `people` and `nickname`,
 * people.ts); it never replaces `room`, `since` or `client`.
 */
export function recv(
  room: string,
  since: number,
  client: string,
  signal?: AbortSignal,
  extra: Record<string, string> = {},
): Promise<RecvAnswer> {
  const watchdog = AbortSignal.timeout(POLL_WATCHDOG_MS);
  const query = new URLSearchParams({ ...extra, room, since: String(since), client });
  return call<RecvAnswer>(`/recv?${query}`, {
    signal: signal ? AbortSignal.any([signal, watchdog]) : watchdog,
  });
}

/** The latest `limit` messages before `before` (or the very latest), oldest first. */
export async function history(room: string, before?: number, limit = 50): Promise<Message[]> {
  const query = new URLSearchParams({ room, limit: String(limit) });
  if (before !== undefined) query.set('before', String(before));
  const { messages } = await call<HistoryAnswer>(`/history?${query}`, {});
  return messages;
}

/**
 * Stores a message; resolves once the server has it (the contract's rule 1).
 * `signal` ends the wait (the sender's timeout): then it rejects with a
 * retryable `ApiError` (`timeout`).
 */
export async function send(message: NewMessage, signal?: AbortSignal): Promise<Message> {
  const answer = await call<SendAnswer>('/send', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(message),
    ...(signal ? { signal } : {}),
  });
  return answer.message;
}

/**
 * Tells the room this browser's person is typing (typing.ts says how often).
 * Never throws: typing is a hint, and a server without the route (404), a
 * refusal (429) or no network at all only means nobody sees it.
 */
export async function typing(fields: TypingFields): Promise<'ok' | 'unknown' | 'failed'> {
  try {
    await call<{ status: 'ok' }>('/typing', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(fields),
    });
    return 'ok';
  } catch (error) {
    return error instanceof ApiError && error.status === 404 ? 'unknown' : 'failed';
  }
}

/** A quick request that answers at once: is the server there? */
export async function ping(): Promise<void> {
  await call<{ time: string }>('/time', {});
}

async function call<T>(url: string, init: RequestInit): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, { cache: 'no-store', ...init });
  } catch (error) {
    const reason = init.signal?.aborted ? (init.signal.reason as Error | undefined) : undefined;
    if (reason?.name === 'AbortError') {
      throw error; // Aborted by the caller: not a failure to report.
    }
    if (reason?.name === 'TimeoutError') {
      throw new ApiError('The server did not answer in time.', 0, 'timeout');
    }
    throw new ApiError('The server cannot be reached.', 0, 'network_error');
  }
  if (res.ok) return (await res.json()) as T;
  throw await errorFrom(res);
}

/** The contract's error body, `{"error":{"code","message"}}`, or a fallback for a proxy's page. */
async function errorFrom(res: Response): Promise<ApiError> {
  const retryAfter = Number(res.headers.get('Retry-After'));
  const retryAfterMs =
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined;
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string } };
    if (body.error?.code && body.error.message) {
      return new ApiError(body.error.message, res.status, body.error.code, retryAfterMs);
    }
  } catch {
    // Not JSON: a proxy or gateway answered. Fall through.
  }
  return new ApiError(`The server answered ${res.status}.`, res.status, 'http_error', retryAfterMs);
}
