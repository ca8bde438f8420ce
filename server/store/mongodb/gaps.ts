/**
 * Reading a room without letting a cursor jump past a message that lands
 * later (docs/design.md, "Rules that make delivery correct", rule 2).
 *
 * A MongoDB append takes its id from a counter, then inserts: two writes, so
 * id 8 can land before id 7. Readers therefore return only the contiguous
 * run of ids after their cursor. At a missing id they stop, unless the
 * message after it is older than the grace (mongodb-timing.ts): then they
 * claim the id by inserting a `void` document with it. The unique
 * `{room, id}` index admits exactly one of the claim and the real message;
 * whichever won is read back, and a claimed id is skipped like any void.
 * Void documents never count against a page's `limit`.
 *
 * The reading loops take their documents from a `GapSource` so that the
 * accounting can be tested without a server (test/store/mongodb/gaps.test.ts).
 */

/** What the scan needs of a document. */
export interface GapDoc {
  id: number;
  time: Date;
  void?: true;
}

export interface GapSource<D extends GapDoc> {
  /** Up to `count` documents with id ≥ `from`, ascending. */
  from(from: number, count: number): Promise<D[]>;
  /** Up to `count` documents with id < `below`, descending. */
  below(below: number, count: number): Promise<D[]>;
  /** Inserts void documents with these ids; ids already taken stay as they are. */
  claim(ids: number[]): Promise<void>;
}

export interface GapClock {
  graceMs: number;
  now(): number;
}

/**
 * How `after` ended:
 * - `limit`: it holds `limit` messages; more may follow at once.
 * - `head`: it read everything the room has after the cursor.
 * - `gap`: it stopped before a missing id still within its grace (a writer
 *   may yet insert it); what follows waits until the id lands or is claimed,
 *   at the latest `gapGraceMs` after the next id became visible.
 */
export type AfterEnd = 'limit' | 'head' | 'gap';

type Stop =
  | { kind: 'limit' }
  | { kind: 'end' }
  | { kind: 'held'; missing: number }
  | { kind: 'overdue'; missing: number[] };

export interface Scan<D> {
  /** The messages taken (no voids), ascending. */
  taken: D[];
  /** The last id consumed (message or void); the next read starts after it. */
  last: number;
  stop: Stop;
}

/**
 * Walks `docs` (ascending, ids > `since`) from `since + 1` while ids follow
 * on, taking messages until `want` of them. Pure: the clock is an argument.
 */
export function scan<D extends GapDoc>(
  docs: readonly D[],
  since: number,
  want: number,
  now: number,
  graceMs: number,
): Scan<D> {
  const taken: D[] = [];
  let last = since;
  for (const doc of docs) {
    if (taken.length >= want) return { taken, last, stop: { kind: 'limit' } };
    if (doc.id > last + 1) {
      const missing = Array.from({ length: doc.id - last - 1 }, (_, i) => last + 1 + i);
      // The next message's writer took its id after the missing ids' writers started.
      if (now - doc.time.getTime() >= graceMs)
        return { taken, last, stop: { kind: 'overdue', missing } };
      return { taken, last, stop: { kind: 'held', missing: last + 1 } };
    }
    if (doc.id <= last) continue; // not after the cursor (the caller's query excludes these)
    last = doc.id;
    if (!doc.void) taken.push(doc);
  }
  return { taken, last, stop: taken.length >= want ? { kind: 'limit' } : { kind: 'end' } };
}

/** `limit` messages after `since` (fewer at the head or a held gap), and how the read ended. */
export async function readAfter<D extends GapDoc>(
  source: GapSource<D>,
  since: number,
  limit: number,
  clock: GapClock,
): Promise<{ messages: D[]; end: AfterEnd }> {
  const messages: D[] = [];
  if (limit <= 0) return { messages, end: 'limit' };
  const claimed = new Set<number>();
  let last = since;
  for (;;) {
    const want = limit - messages.length;
    const docs = await source.from(last + 1, want);
    const result = scan(docs, last, want, clock.now(), clock.graceMs);
    messages.push(...result.taken);
    last = result.last;
    switch (result.stop.kind) {
      case 'limit':
        return { messages, end: 'limit' };
      case 'held':
        return { messages, end: 'gap' };
      case 'overdue': {
        const { missing } = result.stop;
        // Claimed in this call and still not readable: the claim or the real
        // message is not visible to majority reads yet. Hold, don't spin.
        if (missing.some((id) => claimed.has(id))) return { messages, end: 'gap' };
        await source.claim(missing);
        for (const id of missing) claimed.add(id);
        break;
      }
      case 'end':
        // A short page is the head; a full one was thinned by voids: read on.
        if (docs.length < want) return { messages, end: 'head' };
        break;
    }
  }
}

/**
 * The latest `limit` messages below `below`, oldest first. A missing id
 * inside the page holds back what lies after it (the page's newest end
 * becomes a client's cursor), or is claimed once overdue.
 */
export async function readBefore<D extends GapDoc>(
  source: GapSource<D>,
  below: number,
  limit: number,
  clock: GapClock,
): Promise<D[]> {
  if (limit <= 0) return [];
  const claimed = new Set<number>();
  for (;;) {
    const page = await collectBelow(source, below, limit);
    if (page.length === 0) return [];
    const result = scan(
      page,
      page[0]!.id - 1,
      Number.POSITIVE_INFINITY,
      clock.now(),
      clock.graceMs,
    );
    if (result.stop.kind !== 'overdue') return result.taken;
    const { missing } = result.stop;
    if (missing.some((id) => claimed.has(id))) return result.taken;
    await source.claim(missing);
    for (const id of missing) claimed.add(id);
  }
}

/** Documents below `below`, ascending, holding `limit` messages (or all there are). */
async function collectBelow<D extends GapDoc>(
  source: GapSource<D>,
  below: number,
  limit: number,
): Promise<D[]> {
  const descending: D[] = [];
  let messages = 0;
  let upper = below;
  while (messages < limit) {
    const want = limit - messages;
    const docs = await source.below(upper, want);
    descending.push(...docs);
    messages += docs.filter((doc) => !doc.void).length;
    if (docs.length < want) break;
    upper = docs[docs.length - 1]!.id;
  }
  // Voids past the oldest message carry nothing: start the page at a message.
  while (descending.length > 0 && descending[descending.length - 1]!.void) descending.pop();
  return descending.reverse();
}
