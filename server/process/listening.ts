/**
 * The listening signal: when the chat was started with an IPC channel
 * (`fork()`, or `spawn()` with an `'ipc'` stdio entry), it sends its parent
 * one `ChatListening` message once it listens, so a program that starts it
 * (the tests, the bench, the browser suite) learns the port it got from
 * `PORT=0`, or its socket path, without reading the log. The log line
 * "chat listening on …" stays, for people.
 *
 * Under `WORKERS` > 1 each worker sends its own to the primary, and the
 * primary sends one to its parent once every worker has (server/process/cluster.ts).
 * Without a channel (a terminal, systemd, Docker, IIS, `npm start`, which
 * does not pass one on to its script) nothing is sent: `sendIpc`
 * (server/bus/cluster-ipc.ts) sends only over a connected channel.
 */
import type { AddressInfo } from 'node:net';

export type ChatListening = {
  type: 'chat:listening';
  /** `http://127.0.0.1:PORT`, or the socket or pipe path: what a client connects to. */
  url: string;
  /** The processes that listen: this one, or the primary's workers. */
  pids: number[];
} & (
  | {
      /** The TCP port it listens on. */
      port: number;
      /** The address it is bound to (`127.0.0.1`, `::`). */
      address: string;
    }
  | {
      /** The Unix socket or Windows named pipe it listens on. */
      path: string;
    }
);

/** The message for a server that listens on `address` and is reached at `url`. */
export function listeningSignal(url: string, address: AddressInfo | string | null): ChatListening {
  const pids = [process.pid];
  if (address === null || typeof address === 'string') {
    return { type: 'chat:listening', url, pids, path: address ?? url };
  }
  return { type: 'chat:listening', url, pids, port: address.port, address: address.address };
}

export function isChatListening(value: unknown): value is ChatListening {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as ChatListening).type === 'chat:listening' &&
    typeof (value as ChatListening).url === 'string'
  );
}
