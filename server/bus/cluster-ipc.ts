/**
 * What a cluster worker and its primary say to each other over Node's IPC
 * channel. Every message is tagged `lpchat`, so anything else on the channel
 * (Node's own `NODE_CLUSTER` traffic, a user's) is left alone.
 *
 * - `message`: a stored chat message, worker → primary → every other worker.
 * - `sqlite` / `sqlite-replies`: a worker asks the primary to open its
 *   SQLite file's one writer, and is told the writer's socket, on which its
 *   writes then go (server/store/cluster-writer.ts).
 * - `presence` / `presence-counts`: a worker's batch of who polled and who
 *   left, and the primary's answer with the counts of the rooms it asked for.
 *   Each room's count comes with its first nicknames (server/presence/people.ts).
 * - `event`: an ephemeral event (someone types), worker → primary → every
 *   other worker, like a message, and lost like one when a channel is down.
 * - `shutdown`: the primary asks a worker to stop gracefully.
 */
import type { ChatListening } from '../process/listening.ts';
import type { SqliteCall, SqliteReply } from '../store/sqlite-thread.ts';
import type { Message } from '../store/store.ts';
import type { BusEvent } from './bus.ts';

/** A worker's batched presence news (see `server/presence/shared-presence.ts`). */
export interface PresenceBatch {
  /** `[room, client, nickname?]`: the client polled the room (as Anonymous without a nickname). */
  touches: Array<[string, string] | [string, string, string]>;
  /**
   * Each touch's client address, in `touches` order (null: not known), when
   * any is known: a shared view that keeps addresses (Redis) caps the
   * clients one address has counted, and the names the list shows of them.
   */
  addresses?: Array<string | null>;
  /** `[room, client]`: the client closed its waiting poll. */
  leaves: Array<[string, string]>;
  /** Rooms whose shared count the worker wants back. */
  rooms: string[];
}

/** A worker's call to the primary: open its SQLite file's writer, and say where it listens. */
export interface WriterCall {
  lpchat: 'sqlite';
  id: number;
  call: Extract<SqliteCall, { op: 'open' }>;
  deadline: number;
}

/** The primary's answer; an `open`'s value is `{ socket }`, the writer's path. */
export interface WriterReplies {
  lpchat: 'sqlite-replies';
  replies: SqliteReply[];
}

export type ChatIpc =
  | { lpchat: 'message'; message: Message }
  | WriterCall
  | WriterReplies
  | ({ lpchat: 'presence'; seq: number } & PresenceBatch)
  | { lpchat: 'presence-counts'; seq: number; counts: Array<[string, number, string[]]> }
  | { lpchat: 'event'; event: BusEvent }
  | { lpchat: 'shutdown' };

export function isChatIpc(value: unknown): value is ChatIpc {
  return (
    typeof value === 'object' && value !== null && typeof (value as ChatIpc).lpchat === 'string'
  );
}

/** The part of `process` (in a worker) or of a `cluster.Worker` (in the primary) that IPC needs. */
export interface IpcEndpoint {
  send?(message: unknown, callback?: (error: Error | null) => void): boolean;
  isConnected?(): boolean;
  connected?: boolean;
}

/**
 * Sends without ever throwing: a channel that is closing (a worker dying, a
 * primary gone) just loses the message, which the store catch-up covers.
 * Returns whether it was handed to the channel. (Also carries the
 * listening signal, server/process/listening.ts, which is not tagged `lpchat`.)
 */
export function sendIpc(to: IpcEndpoint, message: ChatIpc | ChatListening): boolean {
  const connected = to.isConnected ? to.isConnected() : to.connected;
  if (!to.send || !connected) return false;
  try {
    to.send(message, ignore);
    return true;
  } catch {
    return false;
  }
}

function ignore(): void {}
