/**
 * Raw HTTP/1.1 over `net` sockets on loopback, for what fetch cannot send:
 * pipelined requests, malformed headers, CONNECT, floods of connections.
 */
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface Exchange {
  /** Everything the server wrote until it closed, or until `timeoutMs`. */
  text: string;
  /** Whether the server closed the connection (false: cut by the timeout). */
  closed: boolean;
  ms: number;
}

/** The port of a chat's `http://127.0.0.1:PORT` URL. */
export const portOf = (url: string): number => Number(new URL(url).port);

/** Opens a socket to 127.0.0.1:`port`, from `localAddress` (another 127.x address is another client). */
export async function openSocket(port: number, localAddress = '127.0.0.1'): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/** Writes `data`, then reads until the server closes or `timeoutMs` passes (then cuts). */
export async function exchange(
  port: number,
  data: string | Buffer,
  options: { localAddress?: string; timeoutMs?: number; until?: (text: string) => boolean } = {},
): Promise<Exchange> {
  const started = performance.now();
  const socket = await openSocket(port, options.localAddress);
  return new Promise((resolve) => {
    let text = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closed, ms: performance.now() - started });
    };
    const timer = setTimeout(() => finish(false), options.timeoutMs ?? 5_000);
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      if (options.until?.(text)) finish(true);
    });
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.write(data);
  });
}

/** The answers in `text`, in order (bodies by Content-Length; the last may be cut). */
export function parseAnswers(text: string): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    answers.push({
      status: Number(statusLine!.split(' ')[1]),
      headers,
      body: rest.slice(end + 4, end + 4 + length),
    });
    rest = rest.slice(end + 4 + length);
  }
  return answers;
}

/** The `error.code` of a JSON error body, or undefined when the body is not one. */
export function errorCode(answer: RawAnswer | undefined): string | undefined {
  try {
    return (JSON.parse(answer?.body ?? '') as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}
