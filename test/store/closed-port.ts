import { once } from 'node:events';
import { createServer } from 'node:net';

/** A 127.0.0.1 port with nothing listening: bind port 0, note the port, close. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
