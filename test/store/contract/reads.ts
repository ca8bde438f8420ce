/** The store contract, part: Appending and reading: ids per room, after(since) and before(id), oldest first. */
import { describe, expect, it } from 'vitest';
import type { Message } from '../../../server/store/store.ts';
import type { ContractContext } from './context.ts';

export function describeReads(ctx: ContractContext): void {
  const { newRoom, say } = ctx;
  describe('append', () => {
    it('assigns ids 1, 2, 3 … per room, each room counting on its own', async () => {
      const [a, b] = [newRoom(), newRoom()];
      const ids = [];
      for (const room of [a, b, a, a, b])
        ids.push((await ctx.store.append(say(room, 'x'))).message.id);
      expect(ids).toEqual([1, 1, 2, 3, 2]);
    });

    it('returns the stored message with its time, and created: true', async () => {
      const room = newRoom();
      const { message, created } = await ctx.store.append({ room, nickname: 'Ada', text: 'hi' });
      expect(created).toBe(true);
      expect(message).toEqual({ id: 1, room, nickname: 'Ada', text: 'hi', time: message.time });
      expect(new Date(message.time).toISOString()).toBe(message.time);
      expect(await ctx.store.after(room, 0, 10)).toEqual([message]);
    });
  });

  describe('after', () => {
    it('gives the messages after an id, oldest first, at most limit', async () => {
      const room = newRoom();
      for (const text of ['a', 'b', 'c', 'd', 'e']) await ctx.store.append(say(room, text));
      const texts = (messages: Message[]) => messages.map((m) => m.text);
      expect(texts(await ctx.store.after(room, 0, 10))).toEqual(['a', 'b', 'c', 'd', 'e']);
      expect(texts(await ctx.store.after(room, 2, 2))).toEqual(['c', 'd']);
      expect(texts(await ctx.store.after(room, 4, 10))).toEqual(['e']);
      expect(await ctx.store.after(room, 5, 10)).toEqual([]);
      expect(await ctx.store.after(newRoom(), 0, 10)).toEqual([]);
    });
  });

  describe('before', () => {
    it('gives the latest page before an id (all when undefined), oldest first', async () => {
      const room = newRoom();
      for (const text of ['a', 'b', 'c', 'd', 'e']) await ctx.store.append(say(room, text));
      const ids = (messages: Message[]) => messages.map((m) => m.id);
      expect(ids(await ctx.store.before(room, undefined, 3))).toEqual([3, 4, 5]);
      expect(ids(await ctx.store.before(room, 3, 10))).toEqual([1, 2]);
      expect(ids(await ctx.store.before(room, 5, 2))).toEqual([3, 4]);
      expect(ids(await ctx.store.before(room, 1, 10))).toEqual([]);
      expect(ids(await ctx.store.before(room, 1000, 2))).toEqual([4, 5]);
      expect(await ctx.store.before(newRoom(), undefined, 10)).toEqual([]);
    });
  });
}
