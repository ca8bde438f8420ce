/**
 * What a tab accepts from its room's channel: any page of the origin can
 * post there, so a note is read only when the server could have sent it.
 */
import { describe, expect, it } from 'vitest';
import { parseNote } from './notes.ts';

const message = (id: number, room = 'main') => ({
  id,
  room,
  nickname: 'Ann',
  text: `message ${id}`,
  time: '2026-12-06T00:00:00.000Z',
});
const answer = (fields: Record<string, unknown>) => ({
  kind: 'answer',
  from: 'tab-1',
  answer: { messages: [message(1)], cursor: 1, online: 1, ...fields },
});

describe('parseNote', () => {
  it('should read the notes the tabs send', () => {
    for (const note of [
      answer({}),
      answer({ people: { version: 2, names: ['Ann'], more: 0 }, typing: [] }),
      { kind: 'status', from: 'tab-1', status: 'connected', error: undefined, visible: true },
      { kind: 'hello', from: 'tab-2', visible: false },
      { kind: 'handover', from: 'tab-1', to: 'tab-2' },
    ])
      expect(parseNote(note, 'main')).toEqual(note);
  });

  it('should drop an id or cursor the server would refuse, and every other wrong shape', () => {
    for (const note of [
      answer({ cursor: 1e15 }),
      answer({ messages: [message(1e15)] }),
      answer({ messages: [message(-1)] }),
      answer({ messages: [message(1.5)] }),
      answer({ messages: [message(1, 'other')] }),
      answer({ messages: Array.from({ length: 101 }, (_, i) => message(i + 1)) }),
      answer({ messages: [{ ...message(1), text: 'x'.repeat(5_000) }] }),
      answer({ online: 'x' }),
      answer({ reset: 'yes' }),
      answer({ people: { version: 1, names: 'Ann', more: 0 } }),
      answer({ typing: [{ nickname: 'Bob' }] }),
      { kind: 'answer', from: 'tab-1' },
      { kind: 'status', from: 'tab-1', status: 'bogus', visible: true },
      { kind: 'status', from: 'tab-1', status: 'connected', visible: true, error: 7 },
      { kind: 'hello', from: 'tab-1', visible: 'yes' },
      { kind: 'handover', from: 'tab-1' },
      { kind: 'beat', from: 'tab-1' },
      { kind: 'hello', from: { id: 1 }, visible: true },
      null,
      'junk',
      42,
    ])
      expect(parseNote(note, 'main')).toBeUndefined();
  });
});
