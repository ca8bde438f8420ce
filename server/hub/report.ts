/**
 * What the hub tells of each poll it ends, and of each delivery: the lane
 * turns these into the request log line and the metrics
 * (server/metrics/telemetry.ts). Positional, not an object: it runs once per
 * answered poll.
 */
import type { PollOutcome } from '../metrics/telemetry.ts';

export type { PollOutcome };

export interface PollReport<R> {
  /** `status` is 0 when the client went away first; `ms` counts from the poll's arrival or its wait. */
  pollEnded(reply: R, room: string, outcome: PollOutcome, status: number, ms: number): void;
  /** Messages written to polls: one message to one poll counts once. */
  delivered(count: number): void;
}
