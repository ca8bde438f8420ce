import { afterEach, describe, expect, it } from 'vitest';
import { startTestChat, type TestChat, until } from '../helpers/chat.ts';

let chat: TestChat;
afterEach(async () => {
  await chat?.close();
});

describe('GET /recv', () => {
  describe('when a message is sent while the poll waits', () => {
    it('answers with that message and its cursor', async () => {
      chat = await startTestChat();
      const poll = chat.recv('since=0');
      await until(() => chat.waiters.size === 1, 'the poll to wait');
      const sent = await chat.send({ nickname: 'Ada', text: 'hi' });
      const answer = await poll;
      expect(answer.messages).toEqual([sent.message]);
      expect(answer.cursor).toBe(sent.id);
      expect(chat.waiters.size).toBe(0);
    });

    it('answers every poll of that room, and only of that room', async () => {
      chat = await startTestChat();
      const inMain = [chat.recv('since=0'), chat.recv('since=0&room=main')];
      const inDev = chat.get('/recv?since=0&room=dev', { signal: AbortSignal.timeout(60_000) });
      await until(() => chat.waiters.size === 3, 'three polls to wait');
      await chat.send({ text: 'to main' });
      const answers = await Promise.all(inMain);
      expect(answers.map((a) => a.messages.map((m) => m.text))).toEqual([['to main'], ['to main']]);
      expect(chat.waiters.size).toBe(1);
      await chat.send({ text: 'to dev', room: 'dev' });
      const dev = (await (await inDev).json()) as { messages: { text: string; room: string }[] };
      expect(dev.messages.map((m) => [m.room, m.text])).toEqual([['dev', 'to dev']]);
    });

    it('serves the same bytes to every poll with the same cursor', async () => {
      chat = await startTestChat();
      const polls = [chat.get('/recv?since=0'), chat.get('/recv?since=0')];
      await until(() => chat.waiters.size === 2, 'two polls to wait');
      await chat.send({ text: 'shared' });
      const [a, b] = await Promise.all(polls.map(async (p) => (await p).text()));
      expect(a).toBe(b);
    });
  });

  describe('when nothing arrives before the poll timeout', () => {
    it('answers an empty list with the same cursor', async () => {
      chat = await startTestChat({ pollTimeoutMs: 200 });
      await chat.send({ text: 'old' });
      const answer = await chat.recv('since=1');
      expect(answer).toMatchObject({ messages: [], cursor: 1 });
      expect(chat.waiters.size).toBe(0);
    });

    it('answers with Cache-Control: no-store and JSON', async () => {
      chat = await startTestChat({ pollTimeoutMs: 100 });
      const res = await chat.get('/recv?since=0');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({ messages: [], cursor: 0, online: 0 });
    });
  });

  describe('when the client goes away while waiting', () => {
    it('frees its waiter at once', async () => {
      chat = await startTestChat({ pollTimeoutMs: 60_000 });
      const abort = new AbortController();
      const poll = chat.get('/recv?since=0', { signal: abort.signal }).catch((e: Error) => e);
      await until(() => chat.waiters.size === 1, 'the poll to wait');
      abort.abort();
      await poll;
      await until(() => chat.waiters.size === 0, 'the waiter to go');
      // Nothing is written to the dead socket when a message comes later.
      await chat.send({ text: 'after' });
      expect(chat.waiters.size).toBe(0);
    });
  });

  describe('with a cursor behind the latest message', () => {
    it('answers at once with exactly the missed messages, oldest first', async () => {
      chat = await startTestChat();
      for (let i = 1; i <= 5; i += 1) await chat.send({ text: `m${i}` });
      const answer = await chat.recv('since=2');
      expect(answer.messages.map((m) => m.text)).toEqual(['m3', 'm4', 'm5']);
      expect(answer.messages.map((m) => m.id)).toEqual([3, 4, 5]);
      expect(answer.cursor).toBe(5);
      expect(chat.waiters.size).toBe(0);
    });

    it('pages a long absence 100 messages at a time, each once', async () => {
      chat = await startTestChat();
      for (let i = 1; i <= 250; i += 1) await chat.send({ text: `m${i}` });
      const seen: number[] = [];
      let cursor = 0;
      while (seen.length < 250) {
        const answer = await chat.recv(`since=${cursor}`);
        expect(answer.messages.length).toBeLessThanOrEqual(100);
        seen.push(...answer.messages.map((m) => m.id));
        cursor = answer.cursor;
      }
      expect(seen).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));
    });

    it('catches up from the store when the hub has never seen the room (after a restart)', async () => {
      chat = await startTestChat();
      const store = chat.store;
      await store.append({ room: 'main', nickname: 'A', text: 'before restart 1' });
      await store.append({ room: 'main', nickname: 'A', text: 'before restart 2' });
      const answer = await chat.recv('since=1');
      expect(answer.messages.map((m) => m.text)).toEqual(['before restart 2']);
    });
  });

  describe('without a cursor (the 2011 client)', () => {
    it('holds until the next message and answers with it', async () => {
      chat = await startTestChat();
      await chat.send({ text: 'old news' });
      const poll = chat.recv('');
      await until(() => chat.waiters.size === 1, 'the poll to wait');
      await chat.send({ text: 'fresh' });
      const answer = await poll;
      expect(answer.messages.map((m) => m.text)).toEqual(['fresh']);
      expect(answer.cursor).toBe(2);
    });
  });

  describe('online count', () => {
    it("answers a client's first poll at once, so a page shows the count when it opens", async () => {
      chat = await startTestChat({ pollTimeoutMs: 60_000 });
      await chat.send({ text: 'hello' });
      const first = await chat.recv('since=1&client=new-client');
      expect(first).toEqual({ messages: [], cursor: 1, online: 1 });
      const second = chat.recv('since=1&client=new-client');
      await until(() => chat.waiters.size === 1, 'the second poll to wait');
      await chat.send({ text: 'and now?' });
      expect((await second).messages.map((m) => m.text)).toEqual(['and now?']);
    });

    it('rises when a client polls and falls when it leaves', async () => {
      chat = await startTestChat({ pollTimeoutMs: 60_000 });
      await chat.recv('since=0&client=client-one');
      await chat.recv('since=0&client=client-two');
      const leaving = new AbortController();
      const first = chat
        .get('/recv?since=0&client=client-one', { signal: leaving.signal })
        .catch(() => undefined);
      const second = chat.recv('since=0&client=client-two');
      await until(() => chat.waiters.size === 2, 'two polls to wait');
      expect(chat.presence.count('main')).toBe(2);

      leaving.abort();
      await first;
      await until(() => chat.waiters.size === 1, 'the first client to leave');
      await chat.send({ text: 'who is here?' });
      expect((await second).online).toBe(1);
    });

    it('counts a tab once however often it polls', async () => {
      chat = await startTestChat({ pollTimeoutMs: 100 });
      await chat.recv('since=0&client=same-tab-1');
      await chat.recv('since=0&client=same-tab-1');
      const answer = await chat.recv('since=0&client=same-tab-1');
      expect(answer.online).toBe(1);
    });
  });
});
