/**
 * Connections in flight from the cluster primary to a worker, closed if the
 * worker dies before it takes them.
 *
 * With Node's default scheduling on Linux and macOS (round-robin,
 * `cluster.SCHED_RR`), the primary accepts every connection and hands its
 * handle to a worker over IPC (`{cmd: 'NODE_CLUSTER', act: 'newconn', seq}`
 * with the handle), keeping its own copy until the worker answers
 * `{ack: seq, accepted}`; then it closes its copy (the worker has one) or
 * hands the connection to another worker. A worker killed between the two
 * never answers, and Node's primary keeps its copy open for as long as it
 * runs: the client waits forever on a connection nobody serves (one or two
 * per crash under load). Node's `lib/internal/cluster/round_robin_handle.js`,
 * `RoundRobinHandle.prototype.handoff`, has the unanswered callback.
 *
 * So the primary notes each connection it sends to a worker, forgets it when
 * the worker answers, and closes what is left when the worker disconnects or
 * exits. Closing the primary's copy is safe either way: a worker that got
 * the connection holds a copy of its own, and one that died with it unread
 * takes the last copy with it, so the client sees the connection close.
 *
 * The alternative, `SCHED_NONE` (each worker accepts from the shared socket,
 * and the kernel closes what a dead worker held), strands nothing but
 * spreads connections unevenly on Linux: Node's docs report 70% of them in
 * two processes of eight.
 *
 * This reads Node's internal IPC messages, whose shape has been the same
 * from Node 0.12 to 26; `test/cluster/worker-crash.test.ts` fails if it
 * changes.
 */
import type { ChildProcess } from 'node:child_process';
import type { Worker } from 'node:cluster';

interface ClusterMessage {
  cmd?: unknown;
  act?: unknown;
  seq?: unknown;
  ack?: unknown;
}

interface Closable {
  close(): void;
}

/** Call once per worker, right after `cluster.fork()`. */
export function closeHandoffsOnDeath(worker: Worker): void {
  const child: ChildProcess = worker.process;
  const inFlight = new Map<number, Closable>();
  const send = child.send;
  child.send = function sendNotingHandoffs(this: ChildProcess, ...args: unknown[]): boolean {
    const [message, handle] = args as [ClusterMessage | undefined, Closable | undefined];
    if (isHandoff(message) && typeof handle?.close === 'function') {
      inFlight.set(message.seq, handle);
    }
    return Reflect.apply(send, this, args) as boolean;
  } as ChildProcess['send'];
  child.on('internalMessage', (message: ClusterMessage) => {
    if (message?.cmd === 'NODE_CLUSTER' && typeof message.ack === 'number') {
      inFlight.delete(message.ack);
    }
  });
  const closeLeftovers = (): void => {
    for (const handle of inFlight.values()) {
      try {
        handle.close();
      } catch {
        // Closed already.
      }
    }
    inFlight.clear();
  };
  child.once('disconnect', closeLeftovers);
  child.once('exit', closeLeftovers);
}

function isHandoff(
  message: ClusterMessage | undefined,
): message is ClusterMessage & { seq: number } {
  return (
    message?.cmd === 'NODE_CLUSTER' && message.act === 'newconn' && typeof message.seq === 'number'
  );
}
