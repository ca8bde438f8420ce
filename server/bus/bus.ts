/**
 * The `Bus` seam: carries every stored message to every server process.
 *
 * `POST /send` stores a message, hands it to its own process's hub at once,
 * and publishes it on the bus; each other process's bus hands it to that
 * process's hub. A bus may lose a message (Redis down, a worker restarting):
 * that only delays delivery, because a poll that carries a cursor catches up
 * from the store. So `publish` never fails a send.
 */
import type { Message } from '../store/store.ts';

export type BusHandler = (message: Message) => void;

export interface Bus {
  /** `local`, `cluster` or `redis`: shown by `/health`. */
  readonly kind: string;
  /**
   * Whether the bus now carries every other process's messages here. While it
   * does not (no bus at all, Redis down, the cluster primary gone), the store
   * watch looks for them in the store (docs/design.md, "The seams").
   */
  readonly live: boolean;
  /** Sends a stored message to the other processes. Never throws. */
  publish(message: Message): void;
  /** Called with every message another process publishes (never with this process's own). */
  onMessage(handler: BusHandler): void;
  close(): Promise<void>;
}

/** One process: there is nobody else to tell. */
export class LocalBus implements Bus {
  readonly kind = 'local';
  /** No bus: another process writing to the same database is found by the store watch alone. */
  readonly live = false;
  publish(_message: Message): void {}
  onMessage(_handler: BusHandler): void {}
  async close(): Promise<void> {}
}
