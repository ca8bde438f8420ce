/**
 * The shared feed between tabs, with Node's BroadcastChannel between feeds
 * of one process standing for tabs, a scripted transport in place of the
 * network, and an election the test decides. The real browser, with Web
 * Locks and BroadcastChannel elections, is in `e2e/tabs.spec.ts`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Message, RecvAnswer } from '../../protocol/protocol.ts';
import type { ConnectionStatus } from '../poll.ts';
import type { Election, ElectionEvents } from './election.ts';
import { SharedFeed } from './feed.ts';
import type { PageEvent, PageLife } from './page-life.ts';

const message = (id: number, room = 'main'): Message => ({
  id,
  room,
  nickname: 'Ann',
  text: `message ${id}`,
  time: '2026-11-30T00:00:00.000Z',
});

class TestElection implements Election {
  leading = false;
  seized = false;
  standing = false;
  constructor(readonly events: ElectionEvents) {}
  stand(): void {
    this.standing = true;
  }
  withdraw(): void {
    this.standing = false;
    if (this.leading) this.depose();
  }
  seize(): void {
    this.seized = true;
    this.elect();
  }
  close(): void {
    this.withdraw();
  }
  elect(): void {
    this.leading = true;
    this.events.onElected();
  }
  depose(): void {
    this.leading = false;
    this.events.onDeposed();
  }
}

class TestPage implements PageLife {
  shown = true;
  #listeners = new Set<(event: PageEvent) => void>();
  visible(): boolean {
    return this.shown;
  }
  listen(listener: (event: PageEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  fire(event: PageEvent): void {
    this.shown = event === 'visible' ? true : event === 'hidden' ? false : this.shown;
    for (const listener of this.#listeners) listener(event);
  }
}

/** Resolves the next time `check` holds after one of a tab's callbacks. */
type Waiter = { check: () => boolean; resolve: () => void };

let rooms = 0;
const feeds: SharedFeed[] = [];
afterEach(() => {
  for (const feed of feeds.splice(0)) feed.stop();
});

/** A tab of `room` whose transport answers `script` in order, then waits until aborted. */
function tab(room: string, script: RecvAnswer[] = []) {
  const shown: number[] = [];
  const answers: RecvAnswer[] = [];
  const statuses: ConnectionStatus[] = [];
  const sinces: number[] = [];
  const waiters = new Set<Waiter>();
  const page = new TestPage();
  let election: TestElection | undefined;
  const changed = () => {
    for (const waiter of waiters) {
      if (waiter.check()) {
        waiters.delete(waiter);
        waiter.resolve();
      }
    }
  };
  const feed = new SharedFeed({
    room,
    client: () => 'browser-12345678',
    onMessages: (messages) => {
      shown.push(...messages.map((m) => m.id));
      changed();
    },
    onOnline: () => {},
    onAnswer: (answer) => {
      answers.push(answer);
      changed();
    },
    onStatus: (status) => {
      statuses.push(status);
      changed();
    },
    election: (_name, events) => {
      election = new TestElection(events);
      return election;
    },
    page,
    recv: (_room, since, _client, signal) => {
      sinces.push(since);
      changed();
      const next = script.shift();
      if (next) return Promise.resolve(next);
      return new Promise((_resolve, reject) =>
        signal?.addEventListener('abort', () => reject(signal.reason)),
      );
    },
    ping: async () => {},
  });
  feeds.push(feed);
  return {
    feed,
    page,
    shown,
    answers,
    statuses,
    sinces,
    get election(): TestElection {
      return election!;
    },
    until(check: () => boolean): Promise<void> {
      if (check()) return Promise.resolve();
      return new Promise((resolve) => waiters.add({ check, resolve }));
    },
  };
}

const room = () => `feed-room-${++rooms}`;

describe('SharedFeed', () => {
  describe('when the leader gets an answer', () => {
    it('should hand every field of it to the other tabs, each once per message', async () => {
      const name = room();
      const people = { version: 2, names: ['Ann', 'Bob'], more: 0 };
      const typing = [{ nickname: 'Bob', client: 'bob-12345678' }];
      const leader = tab(name, [
        { messages: [message(1, name), message(2, name)], cursor: 2, online: 2, people },
        { messages: [], cursor: 2, online: 2, typing, typingOnly: true },
        { messages: [message(2, name), message(3, name)], cursor: 3, online: 2 },
      ]);
      const follower = tab(name);
      follower.feed.start(1); // Its first page of history ended at 1.
      leader.feed.start(0);
      leader.election.elect();
      await follower.until(() => follower.answers.length === 3);
      await leader.until(() => leader.sinces.length === 4);

      expect(leader.shown).toEqual([1, 2, 3]);
      expect(follower.shown).toEqual([2, 3]);
      expect(follower.answers.map((answer) => answer.people)).toEqual([
        people,
        undefined,
        undefined,
      ]);
      expect(follower.answers[1]).toMatchObject({ typing, typingOnly: true });
      expect(leader.sinces).toEqual([0, 2, 2, 3]);
      expect(follower.sinces).toEqual([]);
      expect(follower.statuses).toContain('connected');
    });
  });

  describe('when a tab joins after the leader has answers', () => {
    it('should get the latest people and online count at once, and then follow', async () => {
      const name = room();
      const people = { version: 5, names: ['Ann'], more: 0 };
      const leader = tab(name, [{ messages: [message(1, name)], cursor: 1, online: 1, people }]);
      leader.feed.start(0);
      leader.election.elect();
      await leader.until(() => leader.sinces.length === 2);

      const late = tab(name);
      late.feed.start(1);
      await late.until(() => late.answers.length === 1);
      expect(late.answers[0]).toEqual({ messages: [], cursor: 1, online: 1, people });
      expect(late.shown).toEqual([]);
    });
  });

  describe('when the leader is deposed and a follower takes over', () => {
    it('should poll from the cursor the follower shows', async () => {
      const name = room();
      const first = tab(name, [
        { messages: [message(1, name), message(2, name)], cursor: 2, online: 1 },
      ]);
      const second = tab(name);
      first.feed.start(0);
      second.feed.start(0);
      first.election.elect();
      await second.until(() => second.shown.length === 2);
      first.election.depose();
      second.election.elect();
      await second.until(() => second.sinces.length === 1);
      expect(second.sinces).toEqual([2]);
    });
  });

  describe('when the leader is hidden and a visible tab says hello', () => {
    it('should hand over to that tab', async () => {
      const name = room();
      const leader = tab(name);
      leader.feed.start(0);
      leader.election.elect();
      leader.page.fire('hidden');
      const seen = tab(name);
      seen.feed.start(0);
      await seen.until(() => seen.sinces.length === 1);
      expect(seen.election.seized).toBe(true);
    });
  });

  describe('when the leader is frozen', () => {
    it('should withdraw from the election', () => {
      const name = room();
      const leader = tab(name);
      leader.feed.start(0);
      leader.election.elect();
      leader.page.fire('frozen');
      expect(leader.election.leading).toBe(false);
      expect(leader.election.standing).toBe(false);
      leader.page.fire('resumed');
      expect(leader.election.standing).toBe(true);
    });
  });
});
