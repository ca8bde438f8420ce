/**
 * The one free-port probe of the tests, the bench and the scripts: a
 * 127.0.0.1 port nothing listens on now (bind port 0, note the kernel's
 * pick, close). For a server that must be handed a port (nginx, IIS, a
 * database) or a client that must find nothing there; a server of our own
 * listens on port 0 instead and says which port it got.
 */
import { once } from 'node:events';
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  probe.close();
  await once(probe, 'close');
  return port;
}
