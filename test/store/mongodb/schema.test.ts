/**
 * The MongoDB store's indexes against the queries that rely on them
 * (server/store/mongodb/schema.ts), checked by the planner's rules without a
 * server: an equality prefix then a range or sort on the next key field,
 * and, for a partial index, a query that implies the index's filter. The
 * server-backed suite checks the real plan with `explain()` (mongodb.test.ts).
 */
import type { Document, IndexDescription } from 'mongodb';
import { describe, expect, it } from 'vitest';
import {
  belowFilter,
  fromFilter,
  keyFilter,
  MESSAGE_INDEXES,
} from '../../../server/store/mongodb/schema.ts';

const index = (name: string): IndexDescription => {
  const found = MESSAGE_INDEXES.find((i) => i.name === name);
  if (!found) throw new Error(`no index ${name}`);
  return found;
};

/** The index's key fields, in order. */
const keyFields = (i: IndexDescription) => Object.keys(i.key as Document);

/**
 * Whether `query` implies `filter` in the one way the planner recognises
 * for our filters: each of the filter's field predicates appears, operator
 * for operator, among the query's predicates on that field. (The planner
 * does not derive `$type` from an equality: MongoDB docs, "Partial Indexes",
 * "Query Coverage".)
 */
function implies(query: Document, filter: Document): boolean {
  return Object.entries(filter).every(([field, predicate]) => {
    const onField = query[field];
    if (typeof onField !== 'object' || onField === null) return false;
    return Object.entries(predicate as Document).every(([op, value]) => onField[op] === value);
  });
}

describe('MongoDB indexes and queries', () => {
  describe('room_id', () => {
    it('is unique: one document per id, the arbiter between a late insert and a claim', () => {
      expect(index('room_id').unique).toBe(true);
      expect(index('room_id').partialFilterExpression).toBeUndefined();
    });

    it('serves after and before: equality on room, then a range and a sort on id', () => {
      expect(keyFields(index('room_id'))).toEqual(['room', 'id']);
      for (const filter of [fromFilter('main', 5), belowFilter('main', 5)]) {
        expect(Object.keys(filter)).toEqual(['room', 'id']);
        expect(typeof filter.room).toBe('string');
      }
    });
  });

  describe('room_key', () => {
    it('is unique per room and key, and leaves out sends without a key and voids', () => {
      const i = index('room_key');
      expect(i.unique).toBe(true);
      expect(keyFields(i)).toEqual(['room', 'key']);
      // A message without a key and a void have no string `key`.
      expect(i.partialFilterExpression).toEqual({ key: { $type: 'string' } });
    });

    it('is usable by the key lookup: the query implies its partial filter', () => {
      const filter = index('room_key').partialFilterExpression!;
      expect(implies(keyFilter('main', 'k-1'), filter)).toBe(true);
      expect(keyFilter('main', 'k-1')).toEqual({
        room: 'main',
        key: { $eq: 'k-1', $type: 'string' },
      });
    });
  });
});
