/**
 * The Web Locks election's bookkeeping against an in-memory lock manager
 * that grants, queues, aborts and steals as the Web Locks API specifies
 * (https://w3c.github.io/web-locks/). Chromium's own is in `e2e/tabs.spec.ts`.
 */
import { describe, expect, it } from 'vitest';
import type { ElectionEvents } from './election.ts';
import { LockElection, type LockHeartbeat } from './lock-election.ts';

interface Request {
  callback: (lock: Lock | null) => unknown;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/** One lock name's worth of the API: one holder, a queue, `signal` and `steal`. */
class TestLocks {
  #held: Request | undefined;
  #queue: Request[] = [];

  request(_name: string, options: LockOptions, callback: (lock: Lock | null) => unknown) {
    return new Promise((resolve, reject) => {
      const request: Request = { callback, resolve, reject };
      if (options.steal) {
        this.#held?.reject(new DOMException('The lock was stolen', 'AbortError'));
        this.#held = undefined;
        this.#grant(request);
        return;
      }
      options.signal?.addEventListener('abort', () => {
        if (!this.#queue.includes(request)) return;
        this.#queue = this.#queue.filter((queued) => queued !== request);
        reject(new DOMException('Aborted', 'AbortError'));
      });
      this.#queue.push(request);
      this.#next();
    });
  }

  #next(): void {
    if (this.#held || this.#queue.length === 0) return;
    this.#grant(this.#queue.shift()!);
  }

  #grant(request: Request): void {
    this.#held = request;
    queueMicrotask(async () => {
      try {
        request.resolve(await request.callback({ name: 'room', mode: 'exclusive' } as Lock));
      } catch (error) {
        request.reject(error);
      }
      if (this.#held === request) this.#held = undefined;
      this.#next();
    });
  }
}

function tab(locks: TestLocks, heartbeat?: LockHeartbeat) {
  const log: string[] = [];
  let changed: () => void = () => {};
  const events: ElectionEvents = {
    onElected: () => {
      log.push('elected');
      changed();
    },
    onDeposed: () => {
      log.push('deposed');
      changed();
    },
  };
  const election = new LockElection(
    locks as unknown as LockManager,
    'lpchat:main',
    events,
    heartbeat,
  );
  return {
    election,
    log,
    /** Resolves once the log has `count` entries. */
    logged(count: number): Promise<void> {
      return new Promise((resolve) => {
        changed = () => {
          if (log.length >= count) resolve();
        };
        changed();
      });
    },
  };
}

describe('LockElection', () => {
  describe('when two tabs stand', () => {
    it('should let the first lead, and the second as soon as the first withdraws', async () => {
      const locks = new TestLocks();
      const first = tab(locks);
      const second = tab(locks);
      first.election.stand();
      second.election.stand();
      await first.logged(1);
      expect([first.election.leading, second.election.leading]).toEqual([true, false]);

      first.election.withdraw();
      await second.logged(1);
      expect(first.log).toEqual(['elected', 'deposed']);
      expect(second.election.leading).toBe(true);
    });
  });

  describe('when a tab seizes the lock (a handover to it)', () => {
    it('should lead at once, and the old leader should learn it was deposed and stand again', async () => {
      const locks = new TestLocks();
      const old = tab(locks);
      const next = tab(locks);
      old.election.stand();
      await old.logged(1);
      next.election.stand();
      next.election.seize();
      await next.logged(1);
      await old.logged(2);
      expect(old.log).toEqual(['elected', 'deposed']);
      expect(next.election.leading).toBe(true);

      // The old leader is back in line: it leads again when the new one withdraws.
      next.election.withdraw();
      await old.logged(3);
      expect(old.log).toEqual(['elected', 'deposed', 'elected']);
    });
  });

  describe('when a tab withdraws while it waits in line', () => {
    it('should never be granted the lock', async () => {
      const locks = new TestLocks();
      const leader = tab(locks);
      const waiting = tab(locks);
      const third = tab(locks);
      leader.election.stand();
      await leader.logged(1);
      waiting.election.stand();
      third.election.stand();
      waiting.election.withdraw();
      leader.election.withdraw();
      await third.logged(1);
      expect(waiting.log).toEqual([]);
    });
  });

  describe('when the holder of the lock falls silent (its thread hangs)', () => {
    it('should have a follower that hears no beat steal the lock, and the holder learn it lost', async () => {
      const locks = new TestLocks();
      // A holder without a heartbeat beats never: as one whose thread hangs.
      const hung = tab(locks);
      hung.election.stand();
      await hung.logged(1);
      const channel = `lpchat:test-beat-${Math.random()}`;
      const follower = tab(locks, {
        id: 'follower',
        visible: () => true,
        channel,
        beatMs: 10,
        silenceMs: 50,
        jitterMs: 0,
      });
      follower.election.stand();
      await follower.logged(1);
      await hung.logged(2);
      expect(follower.log).toEqual(['elected']);
      expect(hung.log).toEqual(['elected', 'deposed']);
      expect(hung.election.leading).toBe(false);
      follower.election.close();
      hung.election.close();
    });
  });
});
