/**
 * The `Bus` seam: carries every stored message to every server process.
 *
 * `POST /send` stores a message, hands it to its own process's hub at once,
 * and publishes it on the bus; each other process's bus hands it to that
 * process's hub. A bus may lose a message (Redis down, a worker restarting):
 * that only delays delivery, because a poll that carries a cursor catches up
 * from the store. So `publish` never fails a send.
 *
 * Besides messages the bus carries ephemeral events (`publishEvent`,
 * `onEvent`): someone types. An event is never stored, so nothing catches
 * it up: one the bus cannot carry now is dropped, never queued (a typing
 * hint that arrives late is wrong, not late).
 */
import type { Message } from '../store/store.ts';

export type BusHandler = (message: Message) => void;

/**
 * An ephemeral event: `typing`, someone typing in a room (server/hub/typing.ts);
 * `people`, someone in the room renamed and the shared view has it, so each
 * process wakes the room's polls without waiting for its presence notice.
 */
export type BusEvent =
  | {
      kind: 'typing';
      room: string;
      client: string;
      nickname: string;
      /** The client address that sent it, for the typists-per-address cap. */
      address?: string;
      /** The person emptied their draft: they type no more. */
      stopped?: true;
    }
  | { kind: 'people'; room: string };

export type BusEventHandler = (event: BusEvent) => void;

export interface Bus {
  /** `local`, `cluster` or `redis`: shown by `/health`. */
  readonly kind: string;
  /**
   * Whether the bus now carries every other process's messages here. While it
   * does not (no bus at all, Redis down, the cluster primary gone), the store
   * watch looks for them in the store (docs/design.md, "The seams").
   */
  readonly live: boolean;
  /**
   * Whether, while live, the bus loses a message only with the process that
   * stored it (one that dies between its commit and its publish): an
   * in-order channel that carries every other message. Then the hub trusts
   * its message log's "nothing after your cursor", and the store watch,
   * which looks every `STORE_POLL_MS` for such a bus whether it is live or
   * not, finds the lost one. A bus that may drop a live process's message
   * (Redis, across a reconnect) is not: each poll at the head asks the store.
   */
  readonly reliable: boolean;
  /** Sends a stored message to the other processes. Never throws. */
  publish(message: Message): void;
  /** Called with every message another process publishes (never with this process's own). */
  onMessage(handler: BusHandler): void;
  /** Sends an event to the other processes, or drops it if the bus cannot now. Never throws. */
  publishEvent(event: BusEvent): void;
  /** Called with every event another process publishes. */
  onEvent(handler: BusEventHandler): void;
  close(): Promise<void>;
}

/** The bus checks an event's shape before the hub trusts it: the channel may carry anything. */
export function isBusEvent(value: unknown): value is BusEvent {
  const event = value as BusEvent;
  if (typeof event !== 'object' || event === null) return false;
  if (event.kind === 'people') return typeof event.room === 'string';
  return (
    event.kind === 'typing' &&
    typeof event.room === 'string' &&
    typeof event.client === 'string' &&
    typeof event.nickname === 'string' &&
    (event.address === undefined || typeof event.address === 'string') &&
    (event.stopped === undefined || event.stopped === true)
  );
}

/** One process: there is nobody else to tell. */
export class LocalBus implements Bus {
  readonly kind = 'local';
  /** No bus: another process writing to the same database is found by the store watch alone. */
  readonly live = false;
  /** Nobody to lose a message from: the store watch finds other processes' writes. */
  readonly reliable = true;
  publish(_message: Message): void {}
  onMessage(_handler: BusHandler): void {}
  publishEvent(_event: BusEvent): void {}
  onEvent(_handler: BusEventHandler): void {}
  async close(): Promise<void> {}
}
