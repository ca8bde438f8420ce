/**
 * The store contract, part: retention (`prune`, `pruned`). The storage bound:
 * by age and by count per room, a bounded number of rows per call, each
 * room's newest message kept so its ids carry on.
 *
 * Runs last: the age case deletes, in every room of the suite's database,
 * all but the newest message.
 */
import { describe, expect, it } from 'vitest';
import type { Message, PrunePolicy } from '../../../server/store/store.ts';
import type { ContractContext } from './context.ts';

const ids = (messages: Message[]) => messages.map((m) => m.id);
const NOTHING_BY_AGE = new Date(0);
const EVERYTHING_BY_AGE = () => new Date(Date.now() + 60_000);

export function describeRetention(ctx: ContractContext): void {
  const { newRoom, say } = ctx;
  const fill = async (room: string, count: number) => {
    for (let i = 0; i < count; i += 1) await ctx.store.append(say(room, `m${i + 1}`));
  };
  const policy = (overrides: Partial<PrunePolicy>): PrunePolicy => ({
    olderThan: NOTHING_BY_AGE,
    keepPerRoom: Number.MAX_SAFE_INTEGER,
    rooms: [],
    maxRows: 1_000_000,
    ...overrides,
  });

  describe('retention', () => {
    it('keeps the newest messages of a room by count, and records how far it cut', async () => {
      const [room, other] = [newRoom(), newRoom()];
      await fill(room, 5);
      await fill(other, 5);
      expect(await ctx.store.pruned(room)).toBe(0);
      expect(await ctx.store.prune(policy({ keepPerRoom: 2, rooms: [room] }))).toBe(3);
      expect(ids(await ctx.store.after(room, 0, 10))).toEqual([4, 5]);
      expect(ids(await ctx.store.before(room, undefined, 10))).toEqual([4, 5]);
      expect(await ctx.store.pruned(room)).toBe(3);
      // A room not named keeps its count.
      expect(ids(await ctx.store.after(other, 0, 10))).toEqual([1, 2, 3, 4, 5]);
      // Ids carry on after the cut.
      expect((await ctx.store.append(say(room, 'next'))).message.id).toBe(6);
      expect((await ctx.store.heads([room])).get(room)).toBe(6);
    });

    it('deletes at most maxRows a call, from the oldest id, until the bound holds', async () => {
      const room = newRoom();
      await fill(room, 10);
      const bounded = policy({ keepPerRoom: 1, rooms: [room], maxRows: 4 });
      const runs: number[] = [];
      for (let run = 0; run < 5; run += 1) runs.push(await ctx.store.prune(bounded));
      expect(runs).toEqual([4, 4, 1, 0, 0]);
      expect(ids(await ctx.store.after(room, 0, 10))).toEqual([10]);
      expect(await ctx.store.pruned(room)).toBe(9);
    });

    it('deletes by age, never the newest message of a room', async () => {
      const room = newRoom();
      await fill(room, 3);
      const deleted = await ctx.store.prune(policy({ olderThan: EVERYTHING_BY_AGE() }));
      expect(deleted).toBeGreaterThanOrEqual(2);
      const kept = await ctx.store.after(room, 0, 10);
      expect(ids(kept)).toEqual([3]);
      expect(await ctx.store.pruned(room)).toBe(2);
      expect((await ctx.store.heads([room])).get(room)).toBe(3);
      expect((await ctx.store.append(say(room, 'next'))).message.id).toBe(4);
      // Every room of the database is down to its newest message: another run deletes nothing.
      expect(await ctx.store.prune(policy({ olderThan: new Date(kept[0]!.time) }))).toBe(0);
    });
  });
}
