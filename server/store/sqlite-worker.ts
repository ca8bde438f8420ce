/**
 * The body of a SQLite worker thread (`sqlite-thread.ts` starts it): it
 * opens the file, then answers the main thread's requests one at a time.
 *
 * Every request carries a deadline. One that waited in this thread's queue
 * past it (behind a stalled disk) is refused unrun, so a thread that comes
 * back does not spend its time on answers nobody waits for.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { DeadlineError, SqliteFile } from './sqlite-file.ts';
import type { SqliteReply, SqliteRequest, SqliteWorkerData } from './sqlite-thread.ts';

const port = parentPort;
if (!port) throw new Error('sqlite-worker.ts runs in a worker thread');

let file: SqliteFile | undefined;

const { replies, posted } = workerData as SqliteWorkerData;

port.on('message', (request: SqliteRequest) => {
  replies.postMessage(answer(request));
  // For a main thread waiting on it (sqlite-thread.ts, `awaitReplies`).
  Atomics.add(posted, 0, 1);
  Atomics.notify(posted, 0);
});

function answer(request: SqliteRequest): SqliteReply {
  const { id } = request;
  const started = performance.now();
  try {
    if (request.op !== 'open' && request.op !== 'close' && Date.now() > request.deadline) {
      throw new DeadlineError('the request waited past its deadline');
    }
    const value = run(request);
    return { id, value, ms: performance.now() - started };
  } catch (error) {
    const { name, message, code } = error as { name?: unknown; message?: unknown; code?: unknown };
    return {
      id,
      error: {
        name: String(name ?? 'Error'),
        message: String(message ?? error),
        code: typeof code === 'string' ? code : undefined,
      },
    };
  }
}

function run(request: SqliteRequest): unknown {
  if (request.op === 'open') {
    file?.close();
    file = new SqliteFile(request.file, request.options);
    return undefined;
  }
  if (request.op === 'close') {
    file?.close();
    file = undefined;
    return undefined;
  }
  if (!file) throw Object.assign(new Error('SQLite is not open'), { code: 'SQLITE_CANTOPEN' });
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
  }
}
