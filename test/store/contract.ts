/**
 * The `MessageStore` contract: one suite, run against every store (memory,
 * SQLite, MySQL, MongoDB) by its own `*.test.ts`.
 *
 * Each case works in rooms of its own, so cases share one database and need
 * no cleanup between them. The cross-process cases run when the fixture
 * gives a `url` other processes can open (not for the memory store).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../server/store/open-store.ts';
import type { Message, MessageStore, NewMessage } from '../../server/store/store.ts';
import { appendMany } from '../helpers/append-many.ts';

export interface StoreFixture {
  /** A new, uninitialised handle (its own connection or pool) on this suite's database. */
  open(): Promise<MessageStore>;
  /** `DATABASE_URL` of this suite's database, for child processes. Omit when the data lives in this process. */
  url?: string;
  /** Creates a new empty database and returns its `DATABASE_URL` (the concurrent-start case). */
  emptyDatabase?(): Promise<string>;
  /** Drops what the fixture created. */
  teardown?(): Promise<void>;
}

const WORKER = fileURLToPath(new URL('./store-worker.ts', import.meta.url));

export interface StoreFeatures {
  /** Other processes can open the database: the fixture gives `url` and `emptyDatabase`. */
  processes: boolean;
  /**
   * Sends with one key that race may use up an id (MongoDB without
   * transactions: the loser's id is filled with a hidden placeholder, see
   * mongodb-store.ts). Ids still increase, and readers wait for nothing.
   */
  keyRaceLeavesGap?: boolean;
}

export function describeStore(
  name: string,
  setup: () => Promise<StoreFixture>,
  features: StoreFeatures,
): void {
  describe(`${name} store`, () => {
    let fixture: StoreFixture;
    let store: MessageStore;
    const opened: MessageStore[] = [];
    const children = new Set<ChildProcess>();
    let rooms = 0;
    /** A room no other case uses (ids start at 1 in it). */
    const newRoom = () => `r${++rooms}-${Math.random().toString(36).slice(2, 8)}`;

    const open = async () => {
      const handle = await fixture.open();
      opened.push(handle);
      await handle.init();
      return handle;
    };

    /** Runs `store-worker.ts` in a child process; resolves when it exits 0. */
    const runWorker = async (url: string, ...args: string[]) => {
      const child = spawn(process.execPath, ['--import', 'tsx', WORKER, url, ...args], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      children.add(child);
      let stderr = '';
      child.stderr?.on('data', (chunk) => {
        stderr += chunk;
      });
      const [code] = await once(child, 'exit');
      children.delete(child);
      if (code !== 0) throw new Error(`store-worker ${args.join(' ')} exited ${code}: ${stderr}`);
    };

    beforeAll(async () => {
      fixture = await setup();
      store = await open();
    });

    afterEach(() => {
      for (const child of children) child.kill('SIGKILL');
      children.clear();
    });

    afterAll(async () => {
      for (const handle of opened) await handle.close();
      await fixture?.teardown?.();
    });

    const say = (room: string, text: string, key?: string): NewMessage => ({
      room,
      nickname: 'Ann',
      text,
      key,
    });

    describe('append', () => {
      it('assigns ids 1, 2, 3 … per room, each room counting on its own', async () => {
        const [a, b] = [newRoom(), newRoom()];
        const ids = [];
        for (const room of [a, b, a, a, b])
          ids.push((await store.append(say(room, 'x'))).message.id);
        expect(ids).toEqual([1, 1, 2, 3, 2]);
      });

      it('returns the stored message with its time, and created: true', async () => {
        const room = newRoom();
        const { message, created } = await store.append({ room, nickname: 'Ada', text: 'hi' });
        expect(created).toBe(true);
        expect(message).toEqual({ id: 1, room, nickname: 'Ada', text: 'hi', time: message.time });
        expect(new Date(message.time).toISOString()).toBe(message.time);
        expect(await store.after(room, 0, 10)).toEqual([message]);
      });
    });

    describe('after', () => {
      it('gives the messages after an id, oldest first, at most limit', async () => {
        const room = newRoom();
        for (const text of ['a', 'b', 'c', 'd', 'e']) await store.append(say(room, text));
        const texts = (messages: Message[]) => messages.map((m) => m.text);
        expect(texts(await store.after(room, 0, 10))).toEqual(['a', 'b', 'c', 'd', 'e']);
        expect(texts(await store.after(room, 2, 2))).toEqual(['c', 'd']);
        expect(texts(await store.after(room, 4, 10))).toEqual(['e']);
        expect(await store.after(room, 5, 10)).toEqual([]);
        expect(await store.after(newRoom(), 0, 10)).toEqual([]);
      });
    });

    describe('before', () => {
      it('gives the latest page before an id (all when undefined), oldest first', async () => {
        const room = newRoom();
        for (const text of ['a', 'b', 'c', 'd', 'e']) await store.append(say(room, text));
        const ids = (messages: Message[]) => messages.map((m) => m.id);
        expect(ids(await store.before(room, undefined, 3))).toEqual([3, 4, 5]);
        expect(ids(await store.before(room, 3, 10))).toEqual([1, 2]);
        expect(ids(await store.before(room, 5, 2))).toEqual([3, 4]);
        expect(ids(await store.before(room, 1, 10))).toEqual([]);
        expect(ids(await store.before(room, 1000, 2))).toEqual([4, 5]);
        expect(await store.before(newRoom(), undefined, 10)).toEqual([]);
      });
    });

    describe('idempotency key', () => {
      it('stores a repeated key once and returns the first message', async () => {
        const room = newRoom();
        const first = await store.append(say(room, 'once', 'k-1'));
        const again = await store.append(say(room, 'a retry with other text', 'k-1'));
        expect(again).toEqual({ message: first.message, created: false });
        // The repeat took no id: the next message follows on.
        expect((await store.append(say(room, 'next'))).message.id).toBe(2);
        expect((await store.after(room, 0, 10)).map((m) => m.text)).toEqual(['once', 'next']);
      });

      it('treats the same key in another room as a new message', async () => {
        const [a, b] = [newRoom(), newRoom()];
        await store.append(say(a, 'in a', 'shared'));
        await store.append(say(b, 'b first'));
        const other = await store.append(say(b, 'in b', 'shared'));
        expect(other.created).toBe(true);
        expect(other.message).toMatchObject({ id: 2, room: b, text: 'in b' });
      });

      it('stores new sends and key repeats that arrive together once each', async () => {
        const room = newRoom();
        const stored = await store.append(say(room, 'first', 'k-old'));
        const [a, repeat, b1, b2, c] = await Promise.all([
          store.append(say(room, 'a')),
          store.append(say(room, 'repeat', 'k-old')),
          store.append(say(room, 'b', 'k-new')),
          store.append(say(room, 'b again', 'k-new')),
          store.append(say(room, 'c')),
        ]);
        expect([a!.created, c!.created]).toEqual([true, true]);
        expect(repeat).toEqual({ message: stored.message, created: false });
        // Of two sends with one key, exactly one stores; both answer with its message.
        expect([b1!.created, b2!.created].sort()).toEqual([false, true]);
        expect(b1!.message).toEqual(b2!.message);
        const all = await store.after(room, 0, 10);
        expect(all.map((m) => m.text).sort()).toEqual(['a', b1!.message.text, 'c', 'first'].sort());
        if (features.keyRaceLeavesGap) return;
        expect(all.map((m) => m.id)).toEqual([1, 2, 3, 4]);
        expect((await store.append(say(room, 'next'))).message.id).toBe(5);
      });

      it('stores one message when sends with one key race from several handles', async () => {
        const room = newRoom();
        const handles = [store, await open(), await open()];
        const results = await Promise.all(
          Array.from({ length: 9 }, (_, i) =>
            handles[i % 3]!.append(say(room, `try ${i}`, 'race')),
          ),
        );
        const winner = results.find((r) => r.created)!.message;
        expect(results.filter((r) => r.created)).toHaveLength(1);
        expect(
          results.every((r) => r.message.id === winner.id && r.message.text === winner.text),
        ).toBe(true);
        await store.append(say(room, 'after'));
        const all = await store.after(room, 0, 10);
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
        for (const text of texts) await store.append({ room, nickname, text });
        const stored = await store.after(room, 0, 100);
        expect(stored.map((m) => m.text)).toEqual(texts);
        expect(new Set(stored.map((m) => m.nickname))).toEqual(new Set([nickname]));
        expect((await store.before(room, undefined, 100)).map((m) => m.text)).toEqual(texts);
      });
    });

    describe('a long history', () => {
      it('pages through 10,000 messages giving each exactly once', async () => {
        const room = newRoom();
        const total = 10_000;
        await appendMany(store, room, total, 50);
        const seen: Message[] = [];
        for (let since = 0; ; ) {
          const page = await store.after(room, since, 100);
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
          const page = await store.before(room, before, 100);
          if (page.length === 0) break;
          count += page.length;
          before = page[0]!.id;
        }
        expect(count).toBe(total);
      }, 120_000);
    });

    describe('concurrent writers and a reader paging with after(since)', () => {
      it('lets the reader see every message exactly once, in id order', async () => {
        const room = newRoom();
        const perWriter = 150;
        const handles = [store, await open(), await open()];
        const reader = await open();
        const writers: Promise<unknown>[] = handles.map((handle, w) =>
          appendMany(handle, room, perWriter, 4, `conn${w}`),
        );
        const processes = features.processes ? 2 : 0;
        for (let p = 0; p < processes; p++) {
          writers.push(runWorker(fixture.url!, 'append', room, String(perWriter), `proc${p}`, '4'));
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

        const full = await store.after(room, 0, total + 10);
        expect(full).toHaveLength(total);
        expect(full.map((m) => m.id)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
        expect(view).toEqual(full);
        expect(new Set(full.map((m) => m.text)).size).toBe(total);
      }, 120_000);
    });

    // Only where several processes can share the database (not the memory store).
    if (features.processes) describeStarting();
    function describeStarting() {
      describe('starting on an empty database', () => {
        it('lets two handles init it at once', async () => {
          const url = await fixture.emptyDatabase!();
          const [a, b] = [await openStore(url), await openStore(url)];
          opened.push(a, b);
          await Promise.all([a.init(), b.init()]);
          await a.append(say('main', 'from a'));
          await b.append(say('main', 'from b'));
          expect((await a.after('main', 0, 10)).map((m) => m.id)).toEqual([1, 2]);
        });

        it('lets two processes init it at once', async () => {
          const url = await fixture.emptyDatabase!();
          await Promise.all([runWorker(url, 'init', 'main'), runWorker(url, 'init', 'main')]);
          const check = await openStore(url);
          opened.push(check);
          await check.init();
          const started = await check.after('main', 0, 10);
          expect(started.map((m) => m.id)).toEqual([1, 2]);
          expect(new Set(started.map((m) => m.nickname)).size).toBe(2);
        }, 60_000);
      });
    }

    describe('ping and close', () => {
      it('pings while open; after close the handle is unusable', async () => {
        const handle = await fixture.open();
        await handle.init();
        await expect(handle.ping()).resolves.toBeUndefined();
        await handle.close();
        if (handle.kind === 'memory') return; // Nothing to close: the data lives in the object.
        await expect(handle.ping()).rejects.toThrow();
      });
    });
  });
}
