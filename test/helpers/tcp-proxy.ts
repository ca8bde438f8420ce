/**
 * A TCP proxy on 127.0.0.1 that a test can cut and restore: the way to take
 * a real database or Redis away from the app and give it back, without
 * touching the server itself.
 *
 * `cut()` closes every open connection and refuses new ones (they are
 * destroyed at once, as when a server is down); `restore()` lets them through
 * again. The listening port never changes, so the app reconnects to the same
 * address.
 */
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** `127.0.0.1:port` */
  address: string;
  /** Connections accepted so far (passed through or refused). */
  readonly connections: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let open = true;
  let connections = 0;

  const server: Server = createServer((client) => {
    connections += 1;
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;

  return {
    port,
    address: `127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    cut() {
      open = false;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      open = true;
    },
    async close() {
      open = false;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
