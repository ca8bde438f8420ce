/**
 * The MongoDB store's clock arithmetic: how late a writer's insert can land
 * after it took its id, and how long readers therefore wait for a missing id
 * before they claim it (mongodb-gaps.ts).
 *
 * Safety does not rest on these numbers. A reader gives a missing id up only
 * by inserting a `void` document with that id, and the unique `{room, id}`
 * index lets exactly one of the void and the real message in, so an insert
 * that comes later than all this arithmetic allows fails (its send answers
 * 503) instead of landing behind a reader's cursor. What the numbers decide
 * is liveness: a healthy writer should never lose its id to a reader, and a
 * reader should wait no longer than it must for a writer that died.
 *
 * The writer's worst case, from the moment an append starts (just before it
 * asks the counter for an id) to the moment the server can no longer apply
 * its insert:
 *
 *     sendByMs                   the insert is handed to the driver by then, or never
 *                                (the append fills its id with a void document instead)
 *   + serverSelectionTimeoutMS   the driver finds the primary, or fails
 *   + waitQueueTimeoutMS         it checks a connection out of the pool (or opens one), or fails
 *   + deliveryMs                 the bytes reach the server and it starts the command (assumed)
 *   + insertMaxTimeMs            `maxTimeMS` on the insert: the server gives up on it after this
 *   = writerWorstCaseMs          1 500 + 1 000 + 1 000 + 1 000 + 1 500 = 6 000 ms
 *
 * The client makes exactly one attempt (`retryWrites: false`): a driver retry
 * would resend the insert, with the same `maxTimeMS`, after this sum.
 *
 * A reader measures the wait from the `time` of the message after the gap,
 * which its writer set after taking the larger id, so after the missing id's
 * writer started. Writers' and readers' clocks may differ by `clockSkewMs`.
 * So a reader claims the missing id only once
 *
 *     now − time(next message) ≥ graceMs,  with  graceMs ≥ writerWorstCaseMs + clockSkewMs + headroom
 *                                                  10 000 ≥ 6 000 + 2 000 + 2 000
 *
 * and a store read started `gapGraceMs = graceMs + clockSkewMs` (12 000 ms)
 * after the larger id became visible anywhere settles the gap for good
 * (`MessageStore.gapGraceMs`).
 */

export interface MongoTiming {
  /** Driver: how long to look for a usable server (the primary for writes). */
  serverSelectionTimeoutMS: number;
  /** Driver: how long to wait for a pooled connection, including opening one. */
  waitQueueTimeoutMS: number;
  /** Driver: TCP and TLS connect. Part of the checkout, so bounded by `waitQueueTimeoutMS` too. */
  connectTimeoutMS: number;
  /** Driver: an answer slower than this closes the socket (the request then fails with 503). */
  socketTimeoutMS: number;
  /** The append hands its insert to the driver at most this long after it started, or fills its id with a void. */
  sendByMs: number;
  /** `maxTimeMS` of the insert. */
  insertMaxTimeMs: number;
  /** Assumed bound on network delivery plus the server's queue before it starts a command's clock. */
  deliveryMs: number;
  /** Assumed bound on the difference between any two clocks of writers and readers. */
  clockSkewMs: number;
  /** `maxTimeMS` of reads, the counter bump and claims: a slow server ends the work, not only the wait. */
  operationMaxTimeMs: number;
  /** How old the message after a missing id must be before a reader claims the id. */
  graceMs: number;
}

/** At least this much between the writer's worst case (plus clock skew) and the readers' grace. */
export const MIN_HEADROOM_MS = 1_000;

export const defaultTiming: Readonly<MongoTiming> = Object.freeze({
  serverSelectionTimeoutMS: 1_000,
  waitQueueTimeoutMS: 1_000,
  connectTimeoutMS: 1_000,
  socketTimeoutMS: 5_000,
  sendByMs: 1_500,
  insertMaxTimeMs: 1_500,
  deliveryMs: 1_000,
  clockSkewMs: 2_000,
  operationMaxTimeMs: 2_000,
  graceMs: 10_000,
});

/** The latest an insert can still be applied, counted from the start of its append. */
export function writerWorstCaseMs(t: MongoTiming): number {
  return (
    t.sendByMs +
    t.serverSelectionTimeoutMS +
    t.waitQueueTimeoutMS +
    t.deliveryMs +
    t.insertMaxTimeMs
  );
}

/** How long a missing id may still appear after a larger one is visible (`MessageStore.gapGraceMs`). */
export function gapGraceMs(t: MongoTiming): number {
  return t.graceMs + t.clockSkewMs;
}

/** Throws when the grace does not clearly exceed the writer's worst case: the arithmetic above. */
export function checkTiming(t: MongoTiming): MongoTiming {
  for (const [name, value] of Object.entries(t)) {
    if (!Number.isInteger(value) || value <= 0) {
      throw new Error(`MongoDB timing: ${name} must be a positive integer (ms), got ${value}`);
    }
  }
  const needed = writerWorstCaseMs(t) + t.clockSkewMs + MIN_HEADROOM_MS;
  if (t.graceMs < needed) {
    throw new Error(
      `MongoDB timing: graceMs ${t.graceMs} must be at least ${needed} ` +
        `(writer's worst case ${writerWorstCaseMs(t)} + clock skew ${t.clockSkewMs} + headroom ${MIN_HEADROOM_MS})`,
    );
  }
  return t;
}

/** What an append does once it holds its id: send the insert, or (too late) fill the id with a void. */
export function planInsert(startedAt: number, now: number, t: MongoTiming): 'insert' | 'void' {
  return now - startedAt <= t.sendByMs ? 'insert' : 'void';
}
