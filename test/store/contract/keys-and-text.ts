/** The store contract, part: Idempotency keys (one message per key and room, whatever the race) and text kept byte for byte. */
import { describe, expect, it } from 'vitest';
import type { ContractContext } from './context.ts';

export function describeKeysAndText(ctx: ContractContext): void {
  const { newRoom, say, open, features } = ctx;
  describe('idempotency key', () => {
    it('stores a repeated key once and returns the first message', async () => {
      const room = newRoom();
      const first = await ctx.store.append(say(room, 'once', 'k-1'));
      const again = await ctx.store.append(say(room, 'a retry with other text', 'k-1'));
      expect(again).toEqual({ message: first.message, created: false });
      // The repeat took no id: the next message follows on.
      expect((await ctx.store.append(say(room, 'next'))).message.id).toBe(2);
      expect((await ctx.store.after(room, 0, 10)).map((m) => m.text)).toEqual(['once', 'next']);
    });

    it('treats the same key in another room as a new message', async () => {
      const [a, b] = [newRoom(), newRoom()];
      await ctx.store.append(say(a, 'in a', 'shared'));
      await ctx.store.append(say(b, 'b first'));
      const other = await ctx.store.append(say(b, 'in b', 'shared'));
      expect(other.created).toBe(true);
      expect(other.message).toMatchObject({ id: 2, room: b, text: 'in b' });
    });

    it('stores new sends and key repeats that arrive together once each', async () => {
      const room = newRoom();
      const stored = await ctx.store.append(say(room, 'first', 'k-old'));
      const [a, repeat, b1, b2, c] = await Promise.all([
        ctx.store.append(say(room, 'a')),
        ctx.store.append(say(room, 'repeat', 'k-old')),
        ctx.store.append(say(room, 'b', 'k-new')),
        ctx.store.append(say(room, 'b again', 'k-new')),
        ctx.store.append(say(room, 'c')),
      ]);
      expect([a!.created, c!.created]).toEqual([true, true]);
      expect(repeat).toEqual({ message: stored.message, created: false });
      // Of two sends with one key, exactly one stores; both answer with its message.
      expect([b1!.created, b2!.created].sort()).toEqual([false, true]);
      expect(b1!.message).toEqual(b2!.message);
      const all = await ctx.store.after(room, 0, 10);
      expect(all.map((m) => m.text).sort()).toEqual(['a', b1!.message.text, 'c', 'first'].sort());
      if (features.keyRaceLeavesGap) return;
      expect(all.map((m) => m.id)).toEqual([1, 2, 3, 4]);
      expect((await ctx.store.append(say(room, 'next'))).message.id).toBe(5);
    });

    it('stores one message when sends with one key race from several handles', async () => {
      const room = newRoom();
      const handles = [ctx.store, await open(), await open()];
      const results = await Promise.all(
        Array.from({ length: 9 }, (_, i) => handles[i % 3]!.append(say(room, `try ${i}`, 'race'))),
      );
      const winner = results.find((r) => r.created)!.message;
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect(
        results.every((r) => r.message.id === winner.id && r.message.text === winner.text),
      ).toBe(true);
      await ctx.store.append(say(room, 'after'));
      const all = await ctx.store.after(room, 0, 10);
      expect(all.map((m) => m.text)).toEqual([winner.text, 'after']);
      if (features.keyRaceLeavesGap) return;
      expect(all.map((m) => m.id)).toEqual([1, 2]); // The losers took no id.
    });
  });

  describe('Unicode', () => {
    it('round-trips every kind of text exactly', async () => {
      const room = newRoom();
      const texts = [
        'emoji 😀 👍🏽 👨‍👩‍👧‍👦 🇫🇷',
        'CJK 中文汉字 日本語のテキスト 한국어',
        'RTL مرحبا بالعالم שלום עולם',
        'combining e\u0301 n\u0303 Z\u0324\u0354\u0367\u0311\u0313 and NFC é',
        'astral 𝄞 𠜎 𓀀 🀄',
        '😀'.repeat(2000),
        'quotes \' " ` \\ and a NUL-free tab\tnewline\nend',
      ];
      const nickname = `李小龍😀${'𝄞'.repeat(28)}`; // 32 code points, the longest allowed
      for (const text of texts) await ctx.store.append({ room, nickname, text });
      const stored = await ctx.store.after(room, 0, 100);
      expect(stored.map((m) => m.text)).toEqual(texts);
      expect(new Set(stored.map((m) => m.nickname))).toEqual(new Set([nickname]));
      expect((await ctx.store.before(room, undefined, 100)).map((m) => m.text)).toEqual(texts);
    });
  });
}
