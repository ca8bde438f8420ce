/**
 * What the tabs of one room tell each other over their BroadcastChannel
 * (`lpchat:<room>`), besides the election's own votes.
 *
 * - `answer`: a `/recv` answer, exactly as the leader got it; each tab
 *   applies it against its own cursor (`room-state.ts`). With `to`, it is
 *   the latest state for a tab that just said hello, and only that tab reads it.
 * - `status`: the leader's connection status and whether it is seen.
 * - `hello`: a tab started following, or became visible; the leader answers
 *   with its status and the latest state, and a hidden leader hands over to
 *   a visible tab.
 * - `handover`: the leader asks the tab `to` to take over.
 */
import type { RecvAnswer } from '../../protocol/protocol.ts';
import { ApiError } from '../api.ts';
import type { ConnectionStatus } from '../poll.ts';

/** An `ApiError` as a structured clone carries it (a class's prototype does not cross). */
export interface WireError {
  message: string;
  status: number;
  code: string;
  retryAfterMs: number | undefined;
}

export type TabNote =
  | { kind: 'answer'; from: string; answer: RecvAnswer; to?: string }
  | {
      kind: 'status';
      from: string;
      status: ConnectionStatus;
      error: WireError | undefined;
      visible: boolean;
    }
  | { kind: 'hello'; from: string; visible: boolean }
  | { kind: 'handover'; from: string; to: string };

export function toWire(error: ApiError | undefined): WireError | undefined {
  if (error === undefined) return undefined;
  const { message, status, code, retryAfterMs } = error;
  return { message, status, code, retryAfterMs };
}

export function fromWire(error: WireError | undefined): ApiError | undefined {
  if (error === undefined) return undefined;
  return new ApiError(error.message, error.status, error.code, error.retryAfterMs);
}
