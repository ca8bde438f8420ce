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
  /** Sends a stored message to the other processes. Never throws. */
  publish(message: Message): void;
  /** Called with every message another process publishes (never with this process's own). */
  onMessage(handler: BusHandler): void;
  close(): Promise<void>;
}

/** One process: there is nobody else to tell. */
export class LocalBus implements Bus {
  readonly kind = 'local';
  publish(_message: Message): void {}
  onMessage(_handler: BusHandler): void {}
  async close(): Promise<void> {}
}
