/**
 * What Node's HTTP layer refuses itself, answered in JSON like every other
 * error (README, "Error codes"): a request it cannot parse (`clientError`:
 * a bad request line, NUL bytes, smuggling shapes such as both
 * `Content-Length` and `Transfer-Encoding`, a missing `Host`), headers past
 * Node's size limit (431), a request that did not arrive in time (408), an
 * `Expect` other than `100-continue` (417), and `CONNECT`, which Node hands
 * to a `connect` listener or else drops without a word (405).
 *
 * An answer is written only where the socket can still take one: not when
 * the client is gone, and not in the middle of an answer already started
 * (Node's own rule). The connection closes after it.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { type ErrorCode, httpError } from '../core/errors.ts';
import { writeError } from '../http/answer.ts';
import type { NetMetrics } from './net-metrics.ts';
import { writeRawError } from './raw-answer.ts';

/** Node's error codes, by the contract's code; anything else Node raises is a 400. */
const byNodeCode: Record<string, ErrorCode> = {
  HPE_HEADER_OVERFLOW: 'headers_too_large',
  ERR_HTTP_REQUEST_TIMEOUT: 'request_timeout',
};

export function answerClientErrors(server: Server, metrics?: NetMetrics): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // The client hung up: nobody to answer.
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const started = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
    if (started?.headersSent) {
      socket.destroy();
      return;
    }
    const code = byNodeCode[error.code ?? ''] ?? 'bad_request';
    metrics?.clientErrors.inc({ code });
    writeRawError(socket, httpError(code));
  });

  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    metrics?.clientErrors.inc({ code: 'method_not_allowed' });
    writeRawError(
      socket,
      httpError('method_not_allowed', 'CONNECT is not served: this is not a proxy.'),
    );
  });

  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    metrics?.clientErrors.inc({ code: 'expectation_failed' });
    res.setHeader('Connection', 'close');
    writeError(res, httpError('expectation_failed'));
    req.resume();
  });
}
