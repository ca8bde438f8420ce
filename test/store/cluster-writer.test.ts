/**
 * The cluster's one SQLite writer, in one process: two workers' ends
 * (`ClusterWriter`) and the primary's (`ClusterWriters`), with a real
 * writer thread, its real socket and a real file. Only node:cluster's IPC
 * channel is played by an event emitter here, which carries each message
 * as JSON, as Node's channel does: the channel itself runs in
 * test/cluster/sqlite-writer.test.ts, with real workers.
 */
import type { Worker } from 'node:cluster';
import { EventEmitter, once } from 'node:events';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WriterReplies } from '../../server/bus/cluster-ipc.ts';
import {
  ClusterWriter,
  ClusterWriters,
  MAX_UNSENT_BYTES,
  StoreRelay,
} from '../../server/store/cluster-writer.ts';
import { type Message, StoreUnavailableError } from '../../server/store/store.ts';

const OPTIONS = { synchronous: 'FULL' as const };

/** One worker's IPC channel to the primary, as the two ends see it. */
class Channel extends EventEmitter {
  connected = true;
  /** The primary's view of this worker: what it sends arrives here. */
  readonly worker: Worker;
  /** The socket paths the primary answered with. */
  readonly paths: string[] = [];

  constructor(writers: Pick<ClusterWriters, 'serve'>) {
    super();
    const toWorker = (message: unknown) => {
      const copy = JSON.parse(JSON.stringify(message)) as WriterReplies;
      for (const reply of copy.replies) {
        const socket = (reply as { value?: { socket?: string } }).value?.socket;
        if (socket) this.paths.push(socket);
      }
      setImmediate(() => this.emit('message', copy));
      return true;
    };
    this.worker = { send: toWorker, isConnected: () => this.connected } as unknown as Worker;
    this.send = (message: unknown) => {
      const copy = JSON.parse(JSON.stringify(message));
      setImmediate(() => writers.serve(this.worker, copy));
      return true;
    };
  }

  send: (message: unknown) => boolean;
}

let dir: string;
let file: string;
let writers: ClusterWriters;
const opened: ClusterWriter[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'chat-cluster-writer-'));
  file = join(dir, 'chat.sqlite');
  writers = new ClusterWriters();
});

afterEach(async () => {
  for (const writer of opened.splice(0)) await writer.close();
  await writers.close();
  rmSync(dir, { recursive: true, force: true });
});

async function worker(relay: StoreRelay | undefined) {
  const channel = new Channel(writers);
  const writer = new ClusterWriter(file, OPTIONS, relay, channel);
  opened.push(writer);
  await writer.opened();
  return { writer, channel };
}

function relayed(relay: StoreRelay): Message[] {
  const seen: Message[] = [];
  relay.on((messages) => seen.push(...messages));
  return seen;
}

const soon = () => Date.now() + 5_000;

async function append(writer: ClusterWriter, room: string, text: string) {
  const [result] = await writer.request(
    { op: 'append', inputs: [{ room, nickname: 'n', text }] },
    soon(),
  );
  return result!;
}

/** Waits until `seen` holds `count` messages (each relay frame is an event). */
async function until(seen: Message[], count: number): Promise<void> {
  while (seen.length < count) await new Promise((resolve) => setImmediate(resolve));
}

describe('the cluster writer', () => {
  it('commits both workers’ appends with dense ids, and relays each to the other worker only', async () => {
    const relayA = new StoreRelay();
    const relayB = new StoreRelay();
    const seenA = relayed(relayA);
    const seenB = relayed(relayB);
    const a = await worker(relayA);
    const b = await worker(relayB);
    const sent = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        append(i % 2 === 0 ? a.writer : b.writer, 'r', `m${i}`).then((result) => ({
          from: i % 2 === 0 ? 'a' : 'b',
          result,
        })),
      ),
    );
    const ids = sent.map((s) => s.result.message.id).sort((x, y) => x - y);
    expect(ids).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(sent.every((s) => s.result.created)).toBe(true);
    const idsFrom = (who: string) =>
      sent
        .filter((s) => s.from === who)
        .map((s) => s.result.message.id)
        .sort((x, y) => x - y);
    await until(seenA, 10);
    await until(seenB, 10);
    // In commit order, and never one's own.
    expect(seenA.map((m) => m.id)).toEqual(idsFrom('b'));
    expect(seenB.map((m) => m.id)).toEqual(idsFrom('a'));
  });

  it('relays in batches: the first at once, then what commits within the batch in one frame', async () => {
    await writers.close();
    // Long enough that the two appends below commit within it on a slow machine.
    writers = new ClusterWriters({ relayBatchMs: 1_000 });
    const relayB = new StoreRelay();
    const frames: number[][] = [];
    relayB.on((messages) => frames.push(messages.map((m) => m.id)));
    const a = await worker(new StoreRelay());
    await worker(relayB);
    const first = await append(a.writer, 'r', 'one');
    const second = await append(a.writer, 'r', 'two');
    const third = await append(a.writer, 'r', 'three');
    while (frames.length < 2) await new Promise((resolve) => setImmediate(resolve));
    // At each commit it would have been three frames of one.
    expect(frames).toEqual([[first.message.id], [second.message.id, third.message.id]]);
  });

  it('sends what waits for the batch with a worker’s own acknowledgement, at once', async () => {
    await writers.close();
    writers = new ClusterWriters({ relayBatchMs: 60_000 });
    const relayB = new StoreRelay();
    const seenB = relayed(relayB);
    const a = await worker(new StoreRelay());
    const b = await worker(relayB);
    await append(a.writer, 'r', 'at once');
    await until(seenB, 1);
    // Within the batch: held for b, until b's own send is answered.
    const held = await append(a.writer, 'r', 'held');
    const own = await append(b.writer, 'r', 'own');
    expect(seenB.map((m) => m.id)).toEqual([held.message.id - 1, held.message.id]);
    expect(own.message.id).toBe(held.message.id + 1);
  });

  it('relays the messages of a worker that did not ask for the relay (its bus is Redis) to nobody', async () => {
    const relayA = new StoreRelay();
    const seenA = relayed(relayA);
    const a = await worker(relayA);
    const b = await worker(undefined);
    await append(b.writer, 'r', 'from b');
    await append(a.writer, 'r', 'from a');
    // A relay of b's message to a would have come on a's socket before a's own reply.
    expect(seenA).toEqual([]);
  });

  it('listens in a folder only its own user may enter', async () => {
    if (process.platform === 'win32') return;
    const { channel } = await worker(undefined);
    const path = channel.paths[0]!;
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    await writers.close();
    expect(() => statSync(dirname(path))).toThrow();
  });

  it('cuts off a worker that asks for what only the primary may, and serves it again on its next call', async () => {
    const a = await worker(undefined);
    await expect(a.writer.request({ op: 'open', file, options: OPTIONS }, soon())).rejects.toThrow(
      StoreUnavailableError,
    );
    const after = await append(a.writer, 'r', 'again');
    expect(after.message.id).toBe(1);
    expect(a.channel.paths).toHaveLength(2);
  });

  it('fails a call it cannot take apart, and goes on serving', async () => {
    const a = await worker(undefined);
    const broken = { op: 'append', inputs: null } as unknown as Parameters<
      ClusterWriter['request']
    >[0];
    await expect(a.writer.request(broken, soon())).rejects.toThrow();
    const after = await append(a.writer, 'r', 'still here');
    expect(after.message.id).toBe(1);
    expect(a.channel.paths).toHaveLength(1);
  });

  it('fails the calls as unavailable once the writer is closed, without waiting for their deadline', async () => {
    const a = await worker(undefined);
    await append(a.writer, 'r', 'before');
    await writers.close();
    const started = Date.now();
    await expect(
      a.writer.request(
        { op: 'append', inputs: [{ room: 'r', nickname: 'n', text: 'after' }] },
        Date.now() + 30_000,
      ),
    ).rejects.toThrow(StoreUnavailableError);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('drops a socket whose writer stopped reading (a frozen primary) rather than buffer calls for it', async () => {
    // A writer that answers the hello, then reads nothing more.
    const path = join(dir, 'stalled.sock');
    const connections: Socket[] = [];
    const stalled = createServer((socket) => {
      connections.push(socket);
      socket.once('data', (hello) => {
        const { id } = JSON.parse(hello.toString().split('\n')[0]!) as { id: number };
        socket.write(`${JSON.stringify({ replies: [{ id, ms: 0 }] })}\n`);
        socket.pause();
      });
    });
    stalled.listen(path);
    await once(stalled, 'listening');
    const primary: Pick<ClusterWriters, 'serve'> = {
      serve: (to, raw) =>
        to.send({
          lpchat: 'sqlite-replies',
          replies: [{ id: raw.id, value: { socket: path }, ms: 0 }],
        }),
    };
    const writer = new ClusterWriter(file, OPTIONS, undefined, new Channel(primary));
    opened.push(writer);
    await writer.opened();
    const text = 'x'.repeat(4_000);
    const errors: unknown[] = [];
    let sent = 0;
    while (errors.length === 0 && sent < 2 * (MAX_UNSENT_BYTES / text.length)) {
      for (let i = 0; i < 100; i++, sent++) {
        writer
          .request(
            { op: 'append', inputs: [{ room: 'r', nickname: 'n', text }] },
            Date.now() + 60_000,
          )
          .catch((error: unknown) => errors.push(error));
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(errors[0]).toBeInstanceOf(StoreUnavailableError);
    expect((errors[0] as Error).message).toMatch(/has not read/);
    // Every call written on it failed at once, not at its deadline a minute on.
    expect(errors.length).toBeGreaterThan(MAX_UNSENT_BYTES / (text.length + 200));
    expect(sent * text.length).toBeGreaterThan(MAX_UNSENT_BYTES);
    // The worker closed its end: read on, and the writer's side comes to the end of it.
    connections[0]!.resume();
    await once(connections[0]!, 'close');
    await writer.close();
    stalled.close();
  });
});
