/**
 * Presence across the workers of one machine, with no Redis: the primary
 * keeps the one `LocalPresence` of record, and each worker sends it batches
 * of touches and leaves over IPC and gets back the counts it asked for
 * (`SharedPresence` does the batching and the ~1 s cache).
 *
 * - `createClusterPresence()`: the worker's side.
 * - `servePresence()`: the primary's side, one call per batch.
 */
import { randomInt } from 'node:crypto';
import type { WorkerChannel } from '../bus/cluster-bus.ts';
import { isChatIpc, sendIpc } from '../bus/cluster-ipc.ts';
import type { Log } from '../core/log.ts';
import type { LocalPresence } from './presence.ts';
import { type PresenceBatch, SharedPresence, type SharedRoom } from './shared-presence.ts';

export interface ClusterPresenceOptions {
  windowMs: number;
  cacheMs?: number;
  /** `PRESENCE_STALE_MS`: see `SharedPresenceOptions.staleMs`. */
  staleMs?: number;
  /** How long to wait for the primary's answer. @default 1000 */
  answerTimeoutMs?: number;
  log?: Log;
  channel?: WorkerChannel;
}

export function createClusterPresence(options: ClusterPresenceOptions): SharedPresence {
  const channel: WorkerChannel = options.channel ?? process;
  const answerTimeoutMs = options.answerTimeoutMs ?? 1_000;
  const waiting = new Map<number, (counts: Map<string, SharedRoom>) => void>();
  // Random start: answers meant for this worker's previous life are ignored.
  let seq = randomInt(1_000_000_000);

  const onIpc = (raw: unknown): void => {
    if (!isChatIpc(raw) || raw.lpchat !== 'presence-counts') return;
    const rooms = raw.counts.map(([room, count, names]): [string, SharedRoom] => [
      room,
      { count, names },
    ]);
    waiting.get(raw.seq)?.(new Map(rooms));
  };
  channel.on('message', onIpc);

  function sync(batch: PresenceBatch): Promise<Map<string, SharedRoom>> {
    seq += 1;
    const id = seq;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error(`the primary did not answer within ${answerTimeoutMs} ms`));
      }, answerTimeoutMs);
      waiting.set(id, (counts) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(counts);
      });
      if (!sendIpc(channel, { lpchat: 'presence', seq: id, ...batch })) {
        clearTimeout(timer);
        waiting.delete(id);
        reject(new Error('no IPC channel to the primary'));
      }
    });
  }

  return new SharedPresence(sync, {
    windowMs: options.windowMs,
    cacheMs: options.cacheMs,
    staleMs: options.staleMs,
    log: options.log,
    name: 'cluster presence',
    release: () => channel.off('message', onIpc),
  });
}

/**
 * The primary's side: applies a worker's batch and returns the counts it
 * asked for, each with the room's listed nicknames. `admit` holds each
 * address to `PRESENCE_CLIENTS_PER_ADDRESS` across the workers (a client
 * refused is counted only by its own worker, as a Redis script does).
 */
export function servePresence(
  presence: LocalPresence,
  batch: PresenceBatch,
  admit: (address: string, client: string) => boolean = () => true,
): Array<[string, number, string[]]> {
  for (const [index, [room, client, nickname]] of batch.touches.entries()) {
    const address = batch.addresses?.[index];
    if (typeof address !== 'string') {
      presence.touch(room, client, nickname);
      continue;
    }
    // The per-address cap across every worker: one past it is not counted here.
    if (!admit(address, client)) continue;
    presence.touch(room, client, nickname, () => address);
  }
  for (const [room, client] of batch.leaves) presence.leave(room, client);
  return batch.rooms.map((room) => [room, presence.count(room), presence.people(room).names]);
}
