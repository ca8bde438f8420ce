/**
 * The send queue's decisions, with a scripted transport. That the server
 * stores a retried key once is tested against the real server, from a real
 * browser, in `e2e/reconnect.spec.ts`.
 */
import { describe, expect, it } from 'vitest';
import { ApiError, type Message, type NewMessage } from './api.ts';
import { type PendingSend, Sender } from './sender.ts';

function stored(input: NewMessage, id: number): Message {
  return { id, room: input.room, nickname: input.nickname, text: input.text, time: '' };
}

describe('Sender', () => {
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
});
