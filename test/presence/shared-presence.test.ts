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
import { until } from '../helpers/wait.ts';

const opened: SharedPresence[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((p) => p.close()));
});

function sharedView(windowMs: number) {
  const primary = new LocalPresence(windowMs);
  let reachable = true;
  let syncs = 0;
  const worker = () => {
    const presence = new SharedPresence(
      async (batch) => {
        syncs += 1;
        if (!reachable) throw new Error('the shared view is unreachable');
        const rooms = servePresence(primary, batch);
        return new Map(rooms.map(([room, count, names]) => [room, { count, names }]));
      },
      { windowMs, cacheMs: 20, batchMs: 1, staleMs: 200 },
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
});
