/**
 * A chat killed while it listened on a Unix socket path leaves the socket
 * file behind, and the next start fails with EADDRINUSE. Before listening on
 * a path, remove the file if nothing answers on it (a live server keeps it).
 * Windows named pipes (`\\.\pipe\…`) vanish with their process: nothing to do.
 */
import { lstat, unlink } from 'node:fs/promises';
import { connect } from 'node:net';

export async function removeStaleSocket(path: string): Promise<void> {
  if (process.platform === 'win32' || path.startsWith('\\\\')) return;
  const stat = await lstat(path).catch(() => undefined);
  if (!stat?.isSocket()) return;
  const alive = await new Promise<boolean>((resolve) => {
    const probe = connect(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (!alive) await unlink(path).catch(() => undefined);
}
