/**
 * The ordering rules of the message log and the waiting polls, driven through real HTTP polls: messages that
 * arrive out of order (as they do from several writers, or over a bus) reach
 * a client in id order, never twice, and never past a gap.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../server/store/memory-store.ts';
import type { Message } from '../../server/store/store.ts';
import { startTestChat, type TestChat, until } from '../helpers/chat.ts';
import { message } from '../helpers/message.ts';

let chat: TestChat;
afterEach(async () => {
  await chat?.close();
});

/** Stores messages 1..n and returns them, as another process would have. */
async function storeMessages(n: number): Promise<Message[]> {
  const stored: Message[] = [];
  for (let i = 0; i < n; i += 1) {
    stored.push(
      (await chat.store.append({ room: 'main', nickname: 'n', text: `m${i + 1}` })).message,
    );
  }
  return stored;
}

describe('delivery order over HTTP', () => {
  describe('when messages arrive out of order', () => {
    it('holds a message back until the smaller id arrives, then delivers both in order', async () => {
      chat = await startTestChat();
      chat.hub.messages.accept(message(1));
      const poll = chat.recv('since=1');
      await until(() => chat.hub.waiting === 1, 'the poll to wait');
      chat.hub.messages.accept(message(3));
      chat.hub.messages.accept(message(2));
      expect((await poll).messages.map((m) => m.id)).toEqual([2, 3]);
    });

    it('fills a gap the bus never fills from the store', async () => {
      chat = await startTestChat();
      const [m1, m2, m3] = await storeMessages(3);
      chat.hub.messages.accept(m1!);
      const poll = chat.recv('since=1');
      await until(() => chat.hub.waiting === 1, 'the poll to wait');
      chat.hub.messages.accept(m3!); // m2 was "lost by the bus"
      const answer = await poll;
      expect(answer.messages).toEqual([m2, m3]);
    });

    it('drops a message it already has (the bus echo, a repeat)', async () => {
      chat = await startTestChat();
      chat.hub.messages.accept(message(1));
      chat.hub.messages.accept(message(2));
      chat.hub.messages.accept(message(1));
      const poll = chat.recv('since=2');
      await until(() => chat.hub.waiting === 1, 'the poll to wait');
      chat.hub.messages.accept(message(2));
      chat.hub.messages.accept(message(3));
      expect((await poll).messages.map((m) => m.id)).toEqual([3]);
    });
  });

  describe('when a client is ahead of this process', () => {
    it('keeps it waiting for messages after its own cursor', async () => {
      chat = await startTestChat();
      const [m1, m2, m3] = await storeMessages(3);
      // The client has 3 (another process stored it and answered); this process knows only 1.
      chat.hub.messages.accept(m1!);
      const poll = chat.recv('since=3');
      await until(() => chat.hub.waiting === 1, 'the poll to wait');
      const { message: m4 } = await chat.store.append({ room: 'main', nickname: 'n', text: 'm4' });
      chat.hub.messages.accept(m2!);
      chat.hub.messages.accept(m3!);
      chat.hub.messages.accept(m4);
      expect((await poll).messages.map((m) => m.id)).toEqual([4]);
    });
  });

  describe('when a client is behind the ring', () => {
    it('answers it from the store', async () => {
      chat = await startTestChat();
      const stored = await storeMessages(300);
      for (const m of stored.slice(0, 299)) chat.hub.messages.accept(m);
      const poll = chat.recv('since=299');
      await until(() => chat.hub.waiting === 1, 'the poll to wait');
      const behind = await chat.recv('since=10'); // answered at once from the store
      expect(behind.messages.map((m) => m.id)).toEqual(stored.slice(10, 110).map((m) => m.id));
      chat.hub.messages.accept(stored[299]!);
      expect((await poll).messages).toEqual([stored[299]]);
    });
  });

  describe('when several waiters are behind the ring with the same cursor', () => {
    it('reads the store once for them all and gives each the same answer', async () => {
      class CountingStore extends MemoryStore {
        reads = 0;
        override after(room: string, since: number, limit: number) {
          this.reads += 1;
          return super.after(room, since, limit);
        }
      }
      const store = new CountingStore();
      chat = await startTestChat({}, { store });
      await storeMessages(5);
      const polls = [chat.get('/recv?since=5'), chat.get('/recv?since=5')];
      await until(() => chat.hub.waiting === 2, 'two polls to wait');
      const [, , m8] = await storeMessages(3); // 6, 7, 8: the bus brings only 8
      store.reads = 0;
      chat.hub.messages.accept(m8!);
      const [a, b] = await Promise.all(polls.map(async (p) => (await p).text()));
      expect(a).toBe(b);
      expect(JSON.parse(a!).messages.map((m: Message) => m.id)).toEqual([6, 7, 8]);
      expect(store.reads).toBe(1);
    });
  });

  describe('a burst of messages', () => {
    it('reaches a waiting poll as one answer', async () => {
      chat = await startTestChat();
      const poll = chat.recv('since=0');
      await until(() => chat.hub.waiting === 1, 'the poll to wait');
      for (let id = 1; id <= 5; id += 1) chat.hub.messages.accept(message(id));
      expect((await poll).messages.map((m) => m.id)).toEqual([1, 2, 3, 4, 5]);
    });
  });
});
