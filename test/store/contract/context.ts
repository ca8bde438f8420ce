/** What each part of the store contract is handed by `describeStore` (`../contract.ts`). */
import type { MessageStore, NewMessage } from '../../../server/store/store.ts';
import type { StoreFeatures, StoreFixture } from '../contract.ts';

export interface ContractContext {
  /** The suite's store, opened and initialised (read it inside a test, not when describing). */
  readonly store: MessageStore;
  readonly fixture: StoreFixture;
  /** Every handle opened, closed after the suite. */
  readonly opened: MessageStore[];
  readonly features: StoreFeatures;
  /** A room no other case uses (ids start at 1 in it). */
  newRoom(): string;
  say(room: string, text: string, key?: string): NewMessage;
  /** Another handle on the same database, initialised. */
  open(): Promise<MessageStore>;
  /** Runs `store-worker.ts` in a child process; resolves when it exits 0. */
  runWorker(url: string, ...args: string[]): Promise<void>;
}
