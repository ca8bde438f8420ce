/**
 * The bus between node:cluster workers on one machine, with no Redis: each
 * worker sends its stored messages to the primary over IPC, and the primary
 * (`server/process/cluster.ts`) relays each one to every other worker. So a worker
 * never hears its own messages back. On SQLite the primary's one writer
 * commits every worker's writes and relays each message as it commits it
 * (server/store/cluster-writer.ts, `StoreRelay`), so then a worker
 * publishes nothing.
 *
 * A message sent while the channel is down (the primary gone, the worker
 * starting or stopping) is lost, as is one whose worker dies between its
 * commit and its publish. The other workers' store watches look every
 * `STORE_POLL_MS` whatever this bus says (`reliable`), and find it; their
 * logs trust their rings, so a poll at the head costs no store read.
 */
import type { StoreRelay } from '../store/cluster-writer.ts';
import type { Message } from '../store/store.ts';
import {
  type Bus,
  type BusEvent,
  type BusEventHandler,
  type BusHandler,
  isBusEvent,
} from './bus.ts';
import { type IpcEndpoint, isChatIpc, sendIpc } from './cluster-ipc.ts';

/** The worker's side of the IPC channel: `process` in a cluster worker. */
export type WorkerChannel = IpcEndpoint & NodeJS.EventEmitter;

export class ClusterBus implements Bus {
  readonly kind = 'cluster';
  /** IPC through the primary keeps every message of a live worker, in order (`Bus.reliable`). */
  readonly reliable: boolean = true;
  readonly #handlers: BusHandler[] = [];
  readonly #eventHandlers: BusEventHandler[] = [];
  readonly #onIpc = (raw: unknown): void => {
    if (!isChatIpc(raw)) return;
    if (raw.lpchat === 'message') for (const handler of this.#handlers) handler(raw.message);
    else if (raw.lpchat === 'event' && isBusEvent(raw.event)) {
      for (const handler of this.#eventHandlers) handler(raw.event);
    }
  };

  readonly #onRelay = (messages: readonly Message[]): void => {
    for (const message of messages) for (const handler of this.#handlers) handler(message);
  };

  /**
   * `storeRelay`: the store's writes go to the cluster's one SQLite writer,
   * which sends every message it commits to the other workers itself
   * (server/store/cluster-writer.ts), and they come from there: `publish`
   * has nothing left to do.
   */
  constructor(
    private readonly channel: WorkerChannel = process,
    private readonly storeRelay?: StoreRelay,
  ) {
    channel.on('message', this.#onIpc);
    storeRelay?.on(this.#onRelay);
  }

  /** The IPC channel to the primary is up. */
  get live(): boolean {
    return (this.channel as { connected?: boolean }).connected !== false;
  }

  publish(message: Message): void {
    if (this.storeRelay) return;
    sendIpc(this.channel, { lpchat: 'message', message });
  }

  onMessage(handler: BusHandler): void {
    this.#handlers.push(handler);
  }

  /** Lost, like a message, while the channel is down (`sendIpc`). */
  publishEvent(event: BusEvent): void {
    sendIpc(this.channel, { lpchat: 'event', event });
  }

  onEvent(handler: BusEventHandler): void {
    this.#eventHandlers.push(handler);
  }

  async close(): Promise<void> {
    this.channel.off('message', this.#onIpc);
    this.storeRelay?.off(this.#onRelay);
    this.#handlers.length = 0;
    this.#eventHandlers.length = 0;
  }
}
