/**
 * Newline-delimited JSON over a stream socket: the wire between a cluster
 * worker and the primary's SQLite writer thread (`cluster-writer.ts`,
 * `writer-socket.ts`). `JSON.stringify` escapes every newline inside a
 * string, so a newline can only end a frame.
 */
import type { Socket } from 'node:net';

/**
 * Calls `onFrame` with each frame that arrives on `socket`, in order. A
 * frame that is not JSON, or a partial one longer than `maxChars`, ends the
 * connection: the peer is broken, and nothing after it can be trusted.
 */
export function readFrames(
  socket: Socket,
  onFrame: (frame: unknown) => void,
  maxChars: number,
): void {
  let partial = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    let start = 0;
    for (let end = chunk.indexOf('\n'); end !== -1; end = chunk.indexOf('\n', start)) {
      const line = partial + chunk.slice(start, end);
      partial = '';
      start = end + 1;
      let frame: unknown;
      try {
        frame = JSON.parse(line);
      } catch {
        socket.destroy(new Error('a frame that is not JSON'));
        return;
      }
      onFrame(frame);
      if (socket.destroyed) return;
    }
    partial += chunk.slice(start);
    if (partial.length > maxChars) socket.destroy(new Error('a frame too long'));
  });
}

/** Writes one frame; false when the socket's buffer is past its high-water mark. */
export function writeFrame(socket: Socket, frame: unknown): boolean {
  return socket.write(`${JSON.stringify(frame)}\n`);
}
