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
import { afterAll, afterEach, beforeAll, describe } from 'vitest';
import type { MessageStore, NewMessage } from '../../server/store/store.ts';
import { ensureBuilt } from '../helpers/build.ts';
import type { ContractContext } from './contract/context.ts';
import { describeKeysAndText } from './contract/keys-and-text.ts';
import { describeLifecycle } from './contract/lifecycle.ts';
import { describeOrdering } from './contract/ordering.ts';
import { describeReads } from './contract/reads.ts';
import { describeRetention } from './contract/retention.ts';

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
   * mongodb/store.ts). Ids still increase, and readers wait for nothing.
   */
  keyRaceLeavesGap?: boolean;
  /**
   * Cases this server cannot run, each with the reason shown in the skipped
   * case's title (FerretDB: docs/stores.md, "FerretDB is not MongoDB").
   */
  skipped?: { longHistory?: string; concurrentWriters?: string };
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
      await ensureBuilt();
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

    const ctx: ContractContext = {
      get store() {
        return store;
      },
      get fixture() {
        return fixture;
      },
      opened,
      features,
      newRoom,
      say,
      open,
      runWorker,
    };
    describeReads(ctx);
    describeKeysAndText(ctx);
    describeOrdering(ctx);
    describeLifecycle(ctx);
    describeRetention(ctx);
  });
}
