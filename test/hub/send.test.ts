/**
 * `hub.send` (server/hub/hub.ts): the hub owns append-then-publish, with
 * the one store deadline (`STORE_TIMEOUT_MS`); the store's up/down state
 * hears of each send from the store wrapper the hub is handed, as in the
 * server (server/metrics/write-health.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../server/store/memory-store.ts';
import type { AppendResult, NewMessage } from '../../server/store/store.ts';
import { StoreUnavailableError } from '../../server/store/store.ts';
import { answered, createTestHub, stopTestHubs } from './fixture.ts';

afterEach(() => {
  stopTestHubs();
});

/** A store whose appends land only when the test lets them. */
class GatedStore extends MemoryStore {
  #gates: (() => void)[] = [];
  override async append(message: NewMessage): Promise<AppendResult> {
    await new Promise<void>((resolve) => this.#gates.push(resolve));
    return super.append(message);
  }
  land(): void {
    for (const open of this.#gates.splice(0)) open();
  }
}

/** The store's up/down state, as the store wrapper tells it. */
function recordedState() {
  const told: string[] = [];
  return {
    told,
    up: true,
    ok: () => told.push('ok'),
    failed: (error: unknown) => told.push(`failed: ${(error as Error).name}`),
  };
}

const hello: NewMessage = { room: 'main', nickname: 'Ann', text: 'hello' };

describe('hub.send', () => {
  describe('when the store answers in time', () => {
    it('stores the message, answers the waiting polls with it, and tells the store is up', async () => {
      const storeState = recordedState();
      const { hub, store, waiting } = createTestHub({}, { storeState });
      const poll = await waiting(0);
      const before = storeState.told.length; // (the poll's read tells it too)
      const { message, created } = await hub.send(hello);
      expect(created).toBe(true);
      expect((await store.after('main', 0, 10)).map((m) => m.id)).toEqual([message.id]);
      expect((await answered(poll)).answer.messages.map((m) => m.text)).toEqual(['hello']);
      expect(storeState.told.slice(before)).toEqual(['ok']);
    });
  });

  describe('when the store does not answer within STORE_TIMEOUT_MS', () => {
    it('rejects with StoreUnavailableError, tells the store is down, and posts the write that lands late', async () => {
      const storeState = recordedState();
      const store = new GatedStore();
      // The store watch's reads, which tell the state too, wait past the deadline.
      const { hub, clock, waiting } = createTestHub(
        { storeTimeoutMs: 1_000, storePollMs: 60_000 },
        { store, storeState },
      );
      const poll = await waiting(0);
      const before = storeState.told.length;
      const sent = hub.send(hello);
      const refused = expect(sent).rejects.toBeInstanceOf(StoreUnavailableError);
      await clock.advanceAsync(1_000);
      await refused;
      expect(storeState.told.slice(before)).toEqual(['failed: StoreUnavailableError']);
      expect(poll.answered).toBe(false);
      store.land();
      expect((await answered(poll)).answer.messages.map((m) => m.text)).toEqual(['hello']);
    });
  });
});
