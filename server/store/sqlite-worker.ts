/**
 * The body of a SQLite worker thread (`sqlite-thread.ts` starts it): it
 * opens the file, then answers the main thread's requests in order.
 *
 * Group commit: when the thread comes back from a transaction (an fsync,
 * with `synchronous=FULL`), it takes every request that came meanwhile, and
 * consecutive appends among them go in one transaction, so senders that
 * arrive while the disk is busy share the next fsync. The thread does not
 * wait for the main thread to batch them: a main thread busy answering polls
 * would leave the disk idle. Their replies go back in one message.
 *
 * In the cluster's writer, in the primary, the thread also serves the
 * workers on a socket of its own (`writer-socket.ts`), with the same group
 * commit: the calls that came from every worker in one turn go together.
 *
 * Every request carries a deadline. One that waited in this thread's queue
 * past it (behind a stalled disk) is refused unrun, so a thread that comes
 * back does not spend its time on answers nobody waits for.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { DeadlineError, isUnavailable, SqliteFile } from './sqlite-file.ts';
import {
  failed,
  type SqliteReply,
  type SqliteRequest,
  type SqliteWorkerData,
} from './sqlite-thread.ts';
import type { AppendResult } from './store.ts';
import { WriterSocket } from './writer-socket.ts';

/** Sends per transaction, at most. */
const MAX_BATCH = 200;

const port = parentPort;
if (!port) throw new Error('sqlite-worker.ts runs in a worker thread');

let file: SqliteFile | undefined;

const { replies, posted } = workerData as SqliteWorkerData;

type AppendRequest = Extract<SqliteRequest, { op: 'append' }>;

port.on('message', (first: SqliteRequest) => {
  const requests = [first];
  for (let next = receiveMessageOnPort(port); next; next = receiveMessageOnPort(port)) {
    requests.push(next.message as SqliteRequest);
  }
  serveAll(requests, post);
});

/** The cluster's writer also serves the workers on a socket (`writer-socket.ts`). */
let socket: WriterSocket | undefined;

/**
 * Answers `requests` in order, consecutive appends in one transaction;
 * replies go out through `post` (to the main thread, or to the workers on
 * the socket).
 */
function serveAll(requests: SqliteRequest[], post: (out: SqliteReply[]) => void): void {
  const out: SqliteReply[] = [];
  for (let i = 0; i < requests.length; ) {
    const appends: AppendRequest[] = [];
    let inputs = 0;
    for (; i < requests.length; i++) {
      const request = requests[i]!;
      if (request.op !== 'append' || (appends.length > 0 && inputs >= MAX_BATCH)) break;
      appends.push(request);
      inputs += request.inputs.length;
    }
    if (appends.length > 0) {
      // An append may wait for the lock: what is answered goes back first.
      post(out);
      appendAll(appends, out);
      continue;
    }
    const request = requests[i++]!;
    if (request.op === 'listen') {
      const { id } = request;
      socket ??= new WriterSocket(serveAll, { relayBatchMs: request.relayBatchMs });
      socket.listen(request.path).then(
        () => post([{ id, value: undefined, ms: 0 }]),
        (error: unknown) => post([failed(id, error)]),
      );
    } else {
      out.push(answer(request));
    }
  }
  post(out);
}

/** Sends the replies in `out` in one message, and empties it. */
function post(out: SqliteReply[]): void {
  if (out.length === 0) return;
  replies.postMessage(out.splice(0));
  // For a main thread waiting on it (sqlite-thread.ts, `awaitReplies`).
  Atomics.add(posted, 0, 1);
  Atomics.notify(posted, 0);
}

/**
 * Appends from several requests in one transaction, each request answered
 * with its own results. One request that fails for itself (a bad input)
 * must not fail the others: then each runs alone. One that fails for the
 * file (busy, full, I/O, its deadline) fails them all, as it would each.
 */
function appendAll(requests: AppendRequest[], out: SqliteReply[]): void {
  const now = Date.now();
  const live: AppendRequest[] = [];
  for (const request of requests) {
    if (now > request.deadline) out.push(failed(request.id, expired()));
    else live.push(request);
  }
  if (live.length <= 1) {
    for (const request of live) out.push(answer(request));
    return;
  }
  const started = performance.now();
  let results: AppendResult[];
  try {
    if (!file) throw notOpen();
    // The batch's deadline is its earliest: no send in it waits past its own.
    const deadline = Math.min(...live.map((request) => request.deadline));
    results = file.append(
      live.flatMap((request) => request.inputs),
      deadline,
    );
  } catch (error) {
    if (unavailable(error)) {
      for (const request of live) out.push(failed(request.id, error));
    } else {
      for (const request of live) out.push(answer(request));
    }
    return;
  }
  const ms = performance.now() - started;
  let at = 0;
  for (const request of live) {
    const value = results.slice(at, at + request.inputs.length);
    at += request.inputs.length;
    out.push({ id: request.id, value, ms });
  }
}

function answer(request: SqliteRequest): SqliteReply {
  const { id } = request;
  const started = performance.now();
  try {
    if (request.op !== 'open' && request.op !== 'close' && Date.now() > request.deadline) {
      throw expired();
    }
    const value = run(request);
    return { id, value, ms: performance.now() - started };
  } catch (error) {
    return failed(id, error);
  }
}

function expired(): DeadlineError {
  return new DeadlineError('the request waited past its deadline');
}

function notOpen(): Error {
  return Object.assign(new Error('SQLite is not open'), { code: 'SQLITE_CANTOPEN' });
}

/** Whether `error` is the file's, not one request's: what `sqlite-store.ts` answers 503 for. */
function unavailable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && isUnavailable(code);
}

function run(request: SqliteRequest): unknown {
  if (request.op === 'open') {
    file?.close();
    file = new SqliteFile(request.file, request.options);
    return undefined;
  }
  if (request.op === 'close') {
    socket?.close();
    socket = undefined;
    file?.close();
    file = undefined;
    return undefined;
  }
  if (!file) throw notOpen();
  switch (request.op) {
    case 'append':
      return file.append(request.inputs, request.deadline);
    case 'after':
      return file.after(request.room, request.since, request.limit);
    case 'before':
      return file.before(request.room, request.before, request.limit);
    case 'heads':
      return file.heads(request.rooms);
    case 'prune':
      return file.prune(request.policy, request.deadline);
    case 'pruned':
      return file.pruned(request.room);
    case 'dataVersion':
      return file.dataVersion();
    case 'ping':
      return file.ping();
    case 'listen':
      throw new Error('listen is served by serveAll');
  }
}
