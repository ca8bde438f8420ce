/**
 * `SharedPresence` in one process: two "workers" share a view through the
 * primary's own function (`servePresence` on a `LocalPresence`), with no IPC
 * between them. The view can be cut, as Redis or the primary can be.
 */
import { isDeepStrictEqual } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { servePresence } from '../../server/presence/cluster-presence.ts';
import { LocalPresence } from '../../server/presence/presence.ts';
import { SharedPresence } from '../../server/presence/shared-presence.ts';
import { SteadyCount } from '../../server/presence/steady-count.ts';
import { until } from '../helpers/wait.ts';

const opened: SharedPresence[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((p) => p.close()));
});

function sharedView(windowMs: number) {
  const primary = new LocalPresence(windowMs);
  let reachable = true;
  let syncs = 0;
  const worker = (cacheMs = 20) => {
    const presence = new SharedPresence(
      async (batch) => {
        syncs += 1;
        if (!reachable) throw new Error('the shared view is unreachable');
        const rooms = servePresence(primary, batch);
        return new Map(rooms.map(([room, count, names]) => [room, { count, names }]));
      },
      { windowMs, cacheMs, batchMs: 1, staleMs: Math.max(200, 10 * cacheMs) },
    );
    opened.push(presence);
    return presence;
  };
  return {
    worker,
    cut: () => {
      reachable = false;
    },
    syncs: () => syncs,
  };
}

describe('SharedPresence', () => {
  it("counts its own clients at once and the other workers' after a sync", async () => {
    const view = sharedView(60_000);
    const a = view.worker();
    const b = view.worker();
    expect(a.touch('main', 'tab-on-a')).toBe(true);
    expect(a.count('main')).toBe(1);
    b.touch('main', 'tab-on-b');
    await until(() => a.count('main') === 2, "a to count both workers' clients");
    await until(() => b.count('main') === 2, "b to count both workers' clients");
  });

  it("lists the other workers' clients under their nicknames after a sync", async () => {
    const view = sharedView(60_000);
    const a = view.worker();
    const b = view.worker();
    a.touch('main', 'tab-on-a', 'Ann');
    b.touch('main', 'tab-on-b', 'Bob');
    await until(
      () => isDeepStrictEqual(a.people('main').names, ['Ann', 'Bob']),
      'a to list Ann and Bob',
    );
    await until(
      () => isDeepStrictEqual(b.people('main').names, ['Ann', 'Bob']),
      'b to list Ann and Bob',
    );
    expect(a.people('main').version).toBe(b.people('main').version);
  });

  it('drops a leaving client from every count', async () => {
    const view = sharedView(60_000);
    const a = view.worker();
    const b = view.worker();
    a.touch('main', 'tab-1');
    b.touch('main', 'tab-2');
    await until(() => a.count('main') === 2, "a to count both workers' clients");
    b.leave('main', 'tab-2');
    await until(() => a.count('main') === 1, 'a to drop the client that left');
  });

  it('falls back to its own clients once the shared view has been unreachable past staleMs', async () => {
    const view = sharedView(60_000);
    const a = view.worker();
    const b = view.worker();
    a.touch('main', 'tab-on-a');
    b.touch('main', 'tab-on-b');
    await until(() => a.count('main') === 2, "a to count both workers' clients");
    view.cut();
    await until(() => a.count('main') === 1, 'a to count only its own client', 3_000);
    expect(view.syncs()).toBeGreaterThan(2);
  });

  it('refresh() resolves once the shared count is in, and asks nothing while the copy is fresh', async () => {
    const view = sharedView(60_000);
    const a = view.worker(60_000);
    const b = view.worker();
    b.touch('main', 'tab-on-b');
    await b.refresh(['main']); // b's touch rides on the sync that answers it
    await a.refresh(['main']);
    expect(a.count('main')).toBe(1);
    const syncs = view.syncs();
    await a.refresh(['main']);
    expect(view.syncs()).toBe(syncs);
  });

  it('refresh(rooms, true) carries a rename to the shared view and reads it back, however fresh the copy', async () => {
    const view = sharedView(60_000);
    const a = view.worker(60_000);
    const b = view.worker(60_000);
    const renamed: string[] = [];
    b.onRename((room) => renamed.push(room));
    a.touch('main', 'tab-on-a', 'Ann');
    b.touch('main', 'tab-on-b', 'Bob');
    await b.refresh(['main'], true);
    await a.refresh(['main'], true);
    expect(a.people('main').names).toEqual(['Ann', 'Bob']);
    b.touch('main', 'tab-on-b', 'Robert');
    expect(renamed).toEqual(['main']);
    await b.refresh(['main'], true);
    await a.refresh(['main'], true);
    expect(a.people('main').names).toEqual(['Ann', 'Robert']);
  });

  it('refresh() resolves when the shared view cannot be reached, and at close', async () => {
    const view = sharedView(60_000);
    const a = view.worker();
    view.cut();
    await a.refresh(['main']);
    expect(a.count('main')).toBe(0);
    const b = view.worker();
    const pending = b.refresh(['other']);
    await b.close();
    await pending;
  });
});

describe('SteadyCount over a shared view', () => {
  // A shared view counts a new client at once (its own process's count) and
  // lists its nickname a sync later: that is one join, and one token.
  it('spends one token per join, though its nickname is listed a sync after its count', async () => {
    const view = sharedView(60_000);
    const shared = view.worker();
    const steady = new SteadyCount(shared, { burst: 2, changeMs: 600_000, maxRooms: 10 });
    const shows = (names: string[]) => () => isDeepStrictEqual(steady.people('main').names, names);

    steady.touch('main', 'tab-ann', 'Ann');
    await until(() => view.syncs() >= 1, "Ann's touch to reach the shared view");
    // The view's answer is cached in the microtasks after the sync resolves.
    await new Promise((resolve) => setImmediate(resolve));
    expect(steady.people('main').names).toEqual(['Ann']);
    // Each join is read at once, as the newcomer's own answer reads it: the
    // count has it, the list names it only once the sync is back.
    steady.touch('main', 'tab-bob', 'Bob');
    expect(steady.count('main')).toBe(2);
    expect(steady.people('main')).toMatchObject({ names: ['Ann'], more: 1 });
    await until(shows(['Ann', 'Bob']), 'the list to show Bob, on the first token');
    steady.touch('main', 'tab-cy', 'Cy');
    expect(steady.count('main')).toBe(3);
    await until(shows(['Ann', 'Bob', 'Cy']), 'the list to show Cy, on the second token');
    expect(steady.count('main')).toBe(3);

    // The burst is spent: the next join waits for a token (changeMs).
    steady.touch('main', 'tab-dee', 'Dee');
    await until(
      () => isDeepStrictEqual(shared.people('main').names, ['Ann', 'Bob', 'Cy', 'Dee']),
      'the shared view to list Dee',
    );
    expect(steady.count('main')).toBe(3);
    expect(steady.people('main').names).toEqual(['Ann', 'Bob', 'Cy']);
  });
});
