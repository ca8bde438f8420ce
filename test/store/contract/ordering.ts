/** The store contract, part: Order under load: a long history paged exactly once, and concurrent writers seen in id order by a reader. */
import { describe, expect, it } from 'vitest';
import { openStore } from '../../../server/store/open-store.ts';
import type { Message } from '../../../server/store/store.ts';
import { appendMany } from '../../helpers/append-many.ts';
import type { ContractContext } from './context.ts';

export function describeOrdering(ctx: ContractContext): void {
  const { newRoom, say, open, runWorker, features } = ctx;
  describe('a long history', () => {
    const skipped = features.skipped?.longHistory;
    const title = 'pages through 10,000 messages giving each exactly once';
    it.skipIf(skipped !== undefined)(
      skipped ? `${title}: SKIPPED, ${skipped}` : title,
      async () => {
        const room = newRoom();
        const total = 10_000;
        await appendMany(ctx.store, room, total, 50);
        const seen: Message[] = [];
        for (let since = 0; ; ) {
          const page = await ctx.store.after(room, since, 100);
          if (page.length === 0) break;
          seen.push(...page);
          since = page[page.length - 1]!.id;
        }
        expect(seen).toHaveLength(total);
        expect(seen.every((m, i) => m.id === i + 1)).toBe(true);
        expect(new Set(seen.map((m) => m.text)).size).toBe(total);
        // And backwards, page by page, with `before`.
        let count = 0;
        for (let before: number | undefined; ; ) {
          const page = await ctx.store.before(room, before, 100);
          if (page.length === 0) break;
          count += page.length;
          before = page[0]!.id;
        }
        expect(count).toBe(total);
      },
      120_000,
    );
  });

  describe('concurrent writers and a reader paging with after(since)', () => {
    const skipped = features.skipped?.concurrentWriters;
    const title = 'lets the reader see every message exactly once, in id order';
    it.skipIf(skipped !== undefined)(
      skipped ? `${title}: SKIPPED, ${skipped}` : title,
      async () => {
        const room = newRoom();
        const perWriter = 150;
        const handles = [ctx.store, await open(), await open()];
        const reader = await open();
        const writers: Promise<unknown>[] = handles.map((handle, w) =>
          appendMany(handle, room, perWriter, 4, `conn${w}`),
        );
        const processes = features.processes ? 2 : 0;
        for (let p = 0; p < processes; p++) {
          writers.push(
            runWorker(ctx.fixture.url!, 'append', room, String(perWriter), `proc${p}`, '4'),
          );
        }
        const total = perWriter * (handles.length + processes);

        let writing = true;
        const done = Promise.all(writers).finally(() => {
          writing = false;
        });
        const view: Message[] = [];
        let since = 0;
        // Page while writers write; one last read after they finish picks up the tail.
        for (let last = false; !last; ) {
          last = !writing;
          for (;;) {
            const page = await reader.after(room, since, 7);
            if (page.length === 0) break;
            view.push(...page);
            since = page[page.length - 1]!.id;
          }
          await new Promise((resolve) => setImmediate(resolve));
        }
        await done;

        const full = await ctx.store.after(room, 0, total + 10);
        expect(full).toHaveLength(total);
        expect(full.map((m) => m.id)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
        expect(view).toEqual(full);
        expect(new Set(full.map((m) => m.text)).size).toBe(total);
      },
      120_000,
    );
  });

  // Only where several processes can share the database (not the memory ctx.store).
  if (features.processes) describeStarting();
  function describeStarting() {
    describe('starting on an empty database', () => {
      it('lets two handles init it at once', async () => {
        const url = await ctx.fixture.emptyDatabase!();
        const [a, b] = [await openStore(url), await openStore(url)];
        ctx.opened.push(a, b);
        await Promise.all([a.init(), b.init()]);
        await a.append(say('main', 'from a'));
        await b.append(say('main', 'from b'));
        expect((await a.after('main', 0, 10)).map((m) => m.id)).toEqual([1, 2]);
      });

      it('lets two processes init it at once', async () => {
        const url = await ctx.fixture.emptyDatabase!();
        await Promise.all([runWorker(url, 'init', 'main'), runWorker(url, 'init', 'main')]);
        const check = await openStore(url);
        ctx.opened.push(check);
        await check.init();
        const started = await check.after('main', 0, 10);
        expect(started.map((m) => m.id)).toEqual([1, 2]);
        expect(new Set(started.map((m) => m.nickname)).size).toBe(2);
      }, 60_000);
    });
  }
}
