/**
 * The typing line: its words, who shows, when they go, and how often the
 * page tells the server. Timers and `Date.now` are vitest's fake ones.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { limits, type Typist } from '../protocol/protocol.ts';
import { TypingIndicator, TypingNotifier, typingText } from './typing.ts';

const OWN = 'own-client-1234';
const ann: Typist = { nickname: 'Ann', client: 'ann-client-1234' };
const bob: Typist = { nickname: 'Bob', client: 'bob-client-1234' };
const cy: Typist = { nickname: 'Cy', client: 'cy-client-12345' };

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('typingText', () => {
  it('should say nothing when nobody types', () => {
    expect(typingText([])).toBe('');
  });

  it('should name one typist, or two', () => {
    expect(typingText(['Ann'])).toBe('Ann is typing…');
    expect(typingText(['Ann', 'Bob'])).toBe('Ann and Bob are typing…');
  });

  it('should name the first two and count the others from three on', () => {
    expect(typingText(['Ann', 'Bob', 'Cy'])).toBe('Ann, Bob and 1 other are typing…');
    expect(typingText(['Ann', 'Bob', 'Cy', 'Di'])).toBe('Ann, Bob and 2 others are typing…');
    expect(typingText(['Ann', 'Bob', 'Cy', 'Di', 'Ed'], 45)).toBe(
      'Ann, Bob and 48 others are typing…',
    );
    expect(typingText(['Ann'], 1)).toBe('Ann and 1 other are typing…');
    expect(typingText([], 3)).toBe('3 people are typing…');
  });
});

function indicator() {
  const lines: string[] = [];
  const typing = new TypingIndicator({ ownClient: () => OWN, render: (text) => lines.push(text) });
  return { typing, lines, shown: () => lines.at(-1) ?? '' };
}

describe('TypingIndicator', () => {
  describe('when an answer names typists', () => {
    it('should show them, in the order they started', () => {
      const { typing, shown } = indicator();
      typing.take({ typing: [ann] });
      expect(shown()).toBe('Ann is typing…');
      typing.take({ typing: [bob, ann], typingOnly: true });
      expect(shown()).toBe('Ann and Bob are typing…');
    });

    it('should never show this browser’s own entry', () => {
      const { typing, lines } = indicator();
      typing.take({ typing: [{ nickname: 'Me', client: OWN }] });
      expect(lines).toEqual([]);
      typing.take({ typing: [{ nickname: 'Me', client: OWN }, ann] });
      expect(lines).toEqual(['Ann is typing…']);
    });

    it('should count one browser once, under its latest nickname', () => {
      const { typing, shown } = indicator();
      typing.take({ typing: [ann] });
      typing.take({ typing: [{ ...ann, nickname: 'Annie' }] });
      expect(shown()).toBe('Annie is typing…');
    });
  });

  describe('when nobody names a typist again', () => {
    it('should drop them the typing TTL after the last answer that named them', () => {
      const { typing, shown } = indicator();
      typing.take({ typing: [ann] });
      vi.advanceTimersByTime(limits.typingTtlMs - 1_000);
      typing.take({ typing: [ann, bob] });
      vi.advanceTimersByTime(999);
      expect(shown()).toBe('Ann and Bob are typing…');
      vi.advanceTimersByTime(limits.typingTtlMs - 999);
      expect(shown()).toBe('');
    });

    it('should keep them through an answer with messages and no typing', () => {
      const { typing, shown } = indicator();
      typing.take({ typing: [ann] });
      typing.take({});
      expect(shown()).toBe('Ann is typing…');
    });

    it('should drop at once those an answer woken for typing leaves out', () => {
      const { typing, shown } = indicator();
      typing.take({ typing: [ann, bob] });
      typing.take({ typing: [bob], typingOnly: true });
      expect(shown()).toBe('Bob is typing…');
    });
  });

  describe('when a typist’s message arrives', () => {
    it('should drop them', () => {
      const { typing, shown } = indicator();
      typing.take({ typing: [ann, bob, cy] });
      typing.messageFrom('Bob');
      expect(shown()).toBe('Ann and Cy are typing…');
    });
  });

  it('should render only when the line changes', () => {
    const { typing, lines } = indicator();
    typing.take({ typing: [ann] });
    typing.take({ typing: [ann] });
    typing.take({});
    expect(lines).toEqual(['Ann is typing…']);
    typing.clear();
    expect(lines).toEqual(['Ann is typing…', '']);
  });
});

describe('TypingNotifier', () => {
  function notifier() {
    let sent = 0;
    const stops: number[] = [];
    const answers: (() => void)[] = [];
    const notify = new TypingNotifier({
      send: (stopped) => {
        sent += 1;
        if (stopped) stops.push(sent);
        return new Promise<void>((resolve) => answers.push(resolve));
      },
    });
    return { notify, sent: () => sent, stops, answer: () => answers.shift()?.() };
  }

  it('should tell a server that has not shown it knows of typing nothing', () => {
    const { notify, sent } = notifier();
    notify.typed('hello');
    expect(sent()).toBe(0);
  });

  it('should tell at the first keystroke, then at most once per interval', () => {
    const { notify, sent } = notifier();
    notify.enable();
    notify.typed('h');
    expect(sent()).toBe(1);
    for (let ms = 0; ms < limits.typingIntervalMs - 100; ms += 100) {
      vi.advanceTimersByTime(100);
      notify.typed('hello');
    }
    expect(sent()).toBe(1);
    vi.advanceTimersByTime(100);
    notify.typed('hello!');
    expect(sent()).toBe(2);
  });

  it('should not tell for an empty draft', () => {
    const { notify, sent } = notifier();
    notify.enable();
    notify.typed('  ');
    expect(sent()).toBe(0);
  });

  it('should tell at once for the next message after a send', () => {
    const { notify, sent } = notifier();
    notify.enable();
    notify.typed('first');
    notify.sent();
    notify.typed('s');
    expect(sent()).toBe(2);
  });

  it('should tell once, at once, that a draft emptied by hand stopped', () => {
    const { notify, sent, stops } = notifier();
    notify.enable();
    notify.typed('');
    expect(sent()).toBe(0);
    notify.typed('oops');
    notify.typed('');
    notify.typed('');
    expect(stops).toEqual([2]);
    // The next keystroke is a new draft, told at once.
    notify.typed('h');
    expect(sent()).toBe(3);
  });

  it('should not tell a stop after a send: the message ends the typing', () => {
    const { notify, stops } = notifier();
    notify.enable();
    notify.typed('hello');
    notify.sent();
    notify.typed('');
    expect(stops).toEqual([]);
  });

  it('should settle once the notice on its way is answered', async () => {
    const { notify, answer } = notifier();
    await notify.settled();
    notify.enable();
    notify.typed('hello');
    let settled = false;
    void notify.settled().then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    answer();
    await vi.waitFor(() => expect(settled).toBe(true));
  });

  it('should stop for good once disabled (the server has no POST /typing)', () => {
    const { notify, sent } = notifier();
    notify.enable();
    notify.disable();
    notify.typed('hello');
    notify.enable();
    vi.advanceTimersByTime(limits.typingIntervalMs);
    notify.typed('hello again');
    expect(sent()).toBe(0);
  });
});
