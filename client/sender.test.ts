/**
 * The send queue's decisions, with a scripted transport. That the server
 * stores a retried key once is tested against the real server, from a real
 * browser, in `e2e/reconnect.spec.ts`, and after a cluster worker died
 * holding the send, in `test/cluster/worker-crash.test.ts`.
 */
import { describe, expect, it } from 'vitest';
import { ApiError, type Message, type NewMessage } from './api.ts';
import { type PendingSend, Sender } from './sender.ts';

function stored(input: NewMessage, id: number): Message {
  return { id, room: input.room, nickname: input.nickname, text: input.text, time: '' };
}

describe('Sender', () => {
  it('should wait for `before` (the typing notice) before the first attempt, and no longer than beforeMs', async () => {
    const order: string[] = [];
    let release: () => void = () => {};
    const sent = new Promise<void>((resolve) => {
      const sender = new Sender({
        room: 'main',
        before: () =>
          new Promise<void>((done) => {
            release = () => {
              order.push('notice answered');
              done();
            };
          }),
        send: async (input) => {
          order.push(`send ${input.text}`);
          return stored(input, 1);
        },
        onSent: () => resolve(),
        onRetrying: () => {},
        onRefused: () => {},
      });
      sender.enqueue('hi', 'Ann');
    });
    await Promise.resolve();
    expect(order).toEqual([]);
    release();
    await sent;
    expect(order).toEqual(['notice answered', 'send hi']);

    // A notice that never answers holds the message up beforeMs at most.
    const late = await new Promise<string>((resolve) => {
      const sender = new Sender({
        room: 'main',
        before: () => new Promise<void>(() => {}),
        beforeMs: 10,
        send: async (input) => stored(input, 2),
        onSent: (pending) => resolve(pending.text),
        onRetrying: () => {},
        onRefused: () => {},
      });
      sender.enqueue('anyway', 'Ann');
    });
    expect(late).toBe('anyway');
  });

  it("should send the browser's client id with each message, for its own share of the send limit", async () => {
    const posted = await new Promise<NewMessage>((resolve) => {
      const sender = new Sender({
        room: 'main',
        client: () => 'browser-0123456789',
        send: async (input) => {
          resolve(input);
          return stored(input, 1);
        },
        onSent: () => {},
        onRetrying: () => {},
        onRefused: () => {},
      });
      sender.enqueue('hi', 'Ann');
    });
    expect(posted.client).toBe('browser-0123456789');
  });

  it('should retry a failed send with the same key, and keep the order typed', async () => {
    const attempts: NewMessage[] = [];
    let failures = 1;
    const sent: string[] = [];
    const done = new Promise<void>((resolve) => {
      const sender = new Sender({
        room: 'main',
        backoff: { random: () => 0 },
        send: async (input) => {
          attempts.push(input);
          if (failures-- > 0) throw new ApiError('down', 0, 'network_error');
          return stored(input, attempts.length);
        },
        onSent: (pending) => {
          sent.push(pending.text);
          if (sent.length === 2) resolve();
        },
        onRetrying: () => {},
        onRefused: () => {},
      });
      sender.enqueue('first', 'Ann');
      sender.enqueue('second', 'Ann');
    });
    await done;
    expect(attempts.map((a) => a.text)).toEqual(['first', 'first', 'second']);
    expect(attempts[1]!.key).toBe(attempts[0]!.key);
    expect(attempts[2]!.key).not.toBe(attempts[0]!.key);
    expect(attempts[0]!.key).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(sent).toEqual(['first', 'second']);
  });

  it('should hand back a send the server refuses (4xx) and go on with the next', async () => {
    const refused: [PendingSend, ApiError][] = [];
    const sent: string[] = [];
    const tooLong = new ApiError('Field "text" is longer than 2000 characters.', 400, 'x');
    const done = new Promise<void>((resolve) => {
      const sender = new Sender({
        room: 'main',
        send: async (input) => {
          if (input.text === 'bad') throw tooLong;
          return stored(input, 1);
        },
        onSent: (pending) => {
          sent.push(pending.text);
          resolve();
        },
        onRetrying: () => {},
        onRefused: (pending, error) => refused.push([pending, error]),
      });
      sender.enqueue('bad', 'Ann');
      sender.enqueue('good', 'Ann');
    });
    await done;
    expect(refused.map(([pending, error]) => [pending.text, error])).toEqual([['bad', tooLong]]);
    expect(sent).toEqual(['good']);
  });

  it('should give up a send that gets no answer within timeoutMs, and retry it with the same key', async () => {
    const attempts: NewMessage[] = [];
    const retried: ApiError[] = [];
    const started = performance.now();
    const sent = await new Promise<Message>((resolve) => {
      const sender = new Sender({
        room: 'main',
        timeoutMs: 50,
        backoff: { random: () => 0 },
        send: (input, signal) => {
          attempts.push(input);
          if (attempts.length > 1) return Promise.resolve(stored(input, 1));
          // The first answer never comes (a connection nobody serves): only the timeout ends it.
          return new Promise((_, reject) => {
            signal?.addEventListener('abort', () =>
              reject(new ApiError('The server did not answer in time.', 0, 'timeout')),
            );
          });
        },
        onSent: (_pending, message) => resolve(message),
        onRetrying: (_pending, error) => retried.push(error),
        onRefused: () => {},
      });
      sender.enqueue('hello', 'Ann');
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(retried.map((e) => [e.code, e.retryable])).toEqual([['timeout', true]]);
    expect(attempts.map((a) => a.key)).toEqual([attempts[0]!.key, attempts[0]!.key]);
    expect(sent.id).toBe(1);
  });
});
