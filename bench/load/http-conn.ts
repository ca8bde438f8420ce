/**
 * A keep-alive HTTP/1.1 client connection on a raw socket, as cheap as the
 * load generator can make it: requests are prebuilt buffers, and the reply
 * parser only finds the status, `Content-Length` and the body. One request
 * at a time per connection (no pipelining), which is what a poller does.
 */
import { connect, type Socket } from 'node:net';

export type OnResponse = (status: number, body: Buffer) => void;

const HEADER_END = Buffer.from('\r\n\r\n');

export class HttpConn {
  readonly socket: Socket;
  #pending: Buffer | undefined;
  #onResponse: OnResponse | undefined;
  #onError: ((error: Error) => void) | undefined;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', (error) => this.#fail(error));
    socket.on('close', () => this.#fail(new Error('connection closed by the server')));
  }

  static open(port: number, host = '127.0.0.1'): Promise<HttpConn> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, host);
      socket.once('connect', () => resolve(new HttpConn(socket)));
      socket.once('error', reject);
    });
  }

  /** Writes a prebuilt request; `onResponse` is called once with its reply. */
  request(raw: Buffer, onResponse: OnResponse, onError?: (error: Error) => void): void {
    this.#onResponse = onResponse;
    this.#onError = onError;
    this.socket.write(raw);
  }

  close(): void {
    this.#onResponse = undefined;
    this.#onError = undefined;
    this.socket.destroy();
  }

  #fail(error: Error): void {
    const onError = this.#onError;
    this.#onResponse = undefined;
    this.#onError = undefined;
    onError?.(error);
  }

  #onData(chunk: Buffer): void {
    const data = this.#pending ? Buffer.concat([this.#pending, chunk]) : chunk;
    const headerEnd = data.indexOf(HEADER_END);
    if (headerEnd < 0) {
      this.#pending = data;
      return;
    }
    const head = data.toString('latin1', 0, headerEnd);
    const status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!length) {
      this.#fail(new Error(`a reply without Content-Length: ${head.split('\r\n')[0]}`));
      return;
    }
    const bodyStart = headerEnd + 4;
    const bodyEnd = bodyStart + Number(length[1]);
    if (data.length < bodyEnd) {
      this.#pending = data;
      return;
    }
    this.#pending = data.length > bodyEnd ? data.subarray(bodyEnd) : undefined;
    const onResponse = this.#onResponse;
    this.#onResponse = undefined;
    this.#onError = undefined;
    onResponse?.(status, data.subarray(bodyStart, bodyEnd));
  }
}

/** A GET request as bytes, built once and written many times. */
export function getRequest(path: string): Buffer {
  return Buffer.from(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`, 'latin1');
}

/** A form POST as bytes. */
export function postForm(path: string, fields: Record<string, string>): Buffer {
  const body = new URLSearchParams(fields).toString();
  return Buffer.from(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** Opens `count` connections, `batch` at a time (a burst of 10,000 SYNs overflows the listen backlog). */
export async function openMany(count: number, port: number, batch = 250): Promise<HttpConn[]> {
  const conns: HttpConn[] = [];
  while (conns.length < count) {
    const size = Math.min(batch, count - conns.length);
    conns.push(...(await Promise.all(Array.from({ length: size }, () => HttpConn.open(port)))));
  }
  return conns;
}
