import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_NICKNAME } from '../../protocol/protocol.ts';
import { peopleOf } from '../../server/presence/people.ts';
import { MemoryStore } from '../../server/store/memory-store.ts';
import { SqliteStore } from '../../server/store/sqlite-store.ts';
import { startTestChat, type TestChat, until } from '../helpers/chat.ts';
import { ManualClock } from '../helpers/manual-clock.ts';

let chat: TestChat;
afterEach(async () => {
  await chat?.close();
});

describe('GET /recv', () => {
  describe('when a message is sent while the poll waits', () => {
    it('answers with that message and its cursor', async () => {
      chat = await startTestChat();
      const poll = chat.recv('since=0');
      await until(() => chat.hub.waiting === 1, 'the poll to wait');
      const sent = await chat.send({ nickname: 'Ada', text: 'hi' });
      const answer = await poll;
      expect(answer.messages).toEqual([sent.message]);
      expect(answer.cursor).toBe(sent.id);
      expect(chat.hub.waiting).toBe(0);
    });

    it('answers every poll of that room, and only of that room', async () => {
      chat = await startTestChat();
      const inMain = [chat.recv('since=0'), chat.recv('since=0&room=main')];
      const inDev = chat.get('/recv?since=0&room=dev', { signal: AbortSignal.timeout(60_000) });
      await until(() => chat.hub.waiting === 3, 'three polls to wait');
      await chat.send({ text: 'to main' });
      const answers = await Promise.all(inMain);
      expect(answers.map((a) => a.messages.map((m) => m.text))).toEqual([['to main'], ['to main']]);
      expect(chat.hub.waiting).toBe(1);
      await chat.send({ text: 'to dev', room: 'dev' });
      const dev = (await (await inDev).json()) as { messages: { text: string; room: string }[] };
      expect(dev.messages.map((m) => [m.room, m.text])).toEqual([['dev', 'to dev']]);
    });

    it('serves the same bytes to every poll with the same cursor', async () => {
      chat = await startTestChat();
      const polls = [chat.get('/recv?since=0'), chat.get('/recv?since=0')];
      await until(() => chat.hub.waiting === 2, 'two polls to wait');
      await chat.send({ text: 'shared' });
      const [a, b] = await Promise.all(polls.map(async (p) => (await p).text()));
      expect(a).toBe(b);
    });
  });

  describe('when nothing arrives before the poll timeout', () => {
    it('answers an empty list with the same cursor', async () => {
      const clock = new ManualClock();
      chat = await startTestChat({ pollTimeoutMs: 25_000 }, { clock });
      await chat.send({ text: 'old' });
      const answer = chat.recv('since=1');
      await until(() => chat.hub.waiting === 1, 'the poll to wait');
      clock.advance(24_999);
      expect(chat.hub.waiting).toBe(1);
      clock.advance(1);
      expect(await answer).toMatchObject({ messages: [], cursor: 1 });
      expect(chat.hub.waiting).toBe(0);
    });

    it('answers with Cache-Control: no-store and JSON', async () => {
      const clock = new ManualClock();
      chat = await startTestChat({ pollTimeoutMs: 25_000 }, { clock });
      const pending = chat.get('/recv?since=0');
      await until(() => chat.hub.waiting === 1, 'the poll to wait');
      clock.advance(25_000);
      const res = await pending;
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
      await until(() => chat.hub.waiting === 1, 'the poll to wait');
      abort.abort();
      await poll;
      await until(() => chat.hub.waiting === 0, 'the waiter to go');
      // Nothing is written to the dead socket when a message comes later.
      await chat.send({ text: 'after' });
      expect(chat.hub.waiting).toBe(0);
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
      expect(chat.hub.waiting).toBe(0);
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
      await until(() => chat.hub.waiting === 1, 'the poll to wait');
      await chat.send({ text: 'fresh' });
      const answer = await poll;
      expect(answer.messages.map((m) => m.text)).toEqual(['fresh']);
      expect(answer.cursor).toBe(2);
    });
  });

  describe('when one address holds MAX_POLLS_PER_ADDRESS waiting polls', () => {
    it('refuses its next poll with 429 too_many_polls, and still takes other addresses', async () => {
      chat = await startTestChat({
        maxPollsPerAddress: 2,
        trustProxy: true,
        pollTimeoutMs: 60_000,
      });
      const from = (address: string) => ({ headers: { 'X-Forwarded-For': address } });
      const held = [
        chat.get('/recv?since=0', from('203.0.113.7')),
        chat.get('/recv?since=0', from('203.0.113.7')),
      ];
      await until(() => chat.hub.waiting === 2, 'two polls to wait');
      const refused = await chat.get('/recv?since=0', from('203.0.113.7'));
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
        'too_many_polls',
      );
      const other = chat.get('/recv?since=0', from('198.51.100.9'));
      await until(() => chat.hub.waiting === 3, 'the other address to wait');
      await chat.send({ text: 'for everyone' });
      const answers = await Promise.all([...held, other]);
      expect(answers.map((res) => res.status)).toEqual([200, 200, 200]);
    });

    // Addresses are counted only from the moment the process holds as many
    // polls as one address may (server/hub/address-count.ts): the
    // polls that were waiting by then are counted when counting starts.
    it('counts each address apart when counting starts with polls from several', async () => {
      chat = await startTestChat({ maxPollsPerAddress: 2, trustProxy: true });
      const from = (address: string, signal?: AbortSignal) => ({
        headers: { 'X-Forwarded-For': address },
        signal,
      });
      const held = [
        chat.get('/recv?since=0', from('203.0.113.7')),
        chat.get('/recv?since=0', from('198.51.100.9')),
      ];
      await until(() => chat.hub.waiting === 2, 'one poll from each address to wait');
      held.push(chat.get('/recv?since=0', from('203.0.113.7')));
      await until(() => chat.hub.waiting === 3, "the first address's second poll to wait");
      expect((await chat.get('/recv?since=0', from('203.0.113.7'))).status).toBe(429);
      held.push(chat.get('/recv?since=0', from('198.51.100.9')));
      await until(() => chat.hub.waiting === 4, "the second address's second poll to wait");
      expect((await chat.get('/recv?since=0', from('198.51.100.9'))).status).toBe(429);
      await chat.send({ text: 'for all four' });
      expect((await Promise.all(held)).map((res) => res.status)).toEqual([200, 200, 200, 200]);
    });

    it('frees the place of a poll that goes away, and counts right when counting starts again', async () => {
      chat = await startTestChat({ maxPollsPerAddress: 4, trustProxy: true });
      const headers = { 'X-Forwarded-For': '203.0.113.7' };
      const poll = () => {
        const abort = new AbortController();
        const answer = chat
          .get('/recv?since=0', { headers, signal: abort.signal })
          .catch((error: Error) => error);
        return { abort, answer };
      };
      const fill = async (count: number) => {
        const polls = [];
        const start = chat.hub.waiting;
        for (let i = 1; i <= count; i++) {
          polls.push(poll());
          await until(() => chat.hub.waiting === start + i, 'the poll to wait');
        }
        return polls;
      };
      const first = await fill(4);
      expect((await chat.get('/recv?since=0', { headers })).status).toBe(429);
      // Counted: one that goes away makes room for one more.
      first[0]!.abort.abort();
      await until(() => chat.hub.waiting === 3, 'the poll that went away to be dropped');
      first.push(...(await fill(1)));
      expect((await chat.get('/recv?since=0', { headers })).status).toBe(429);
      // Down to 1 of 4, under half the limit: counting stops.
      for (const { abort } of first.slice(1, 4)) abort.abort();
      await until(() => chat.hub.waiting === 1, 'three polls to be dropped');
      // Polls taken while not counted are counted when counting starts again.
      const second = await fill(3);
      expect((await chat.get('/recv?since=0', { headers })).status).toBe(429);
      await chat.send({ text: 'for the four left' });
      const answers = await Promise.all([first[4]!, ...second].map(({ answer }) => answer));
      expect(answers.map((res) => (res instanceof Response ? res.status : res.name))).toEqual([
        200, 200, 200, 200,
      ]);
    });
  });

  describe('when the cursor is ahead of every message of the room', () => {
    it("answers at once with reset and the room's head (a database that was reset)", async () => {
      chat = await startTestChat({ pollTimeoutMs: 60_000 });
      await chat.send({ text: 'one' });
      await chat.send({ text: 'two' });
      const answer = await chat.recv('since=5');
      expect(answer).toEqual({ messages: [], cursor: 2, online: 0, reset: true });
    });

    it('tells a waiting poll to reset when an operator deletes the room, then delivers anew', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'chat-reset-'));
      const file = join(dir, 'chat.sqlite');
      try {
        chat = await startTestChat(
          { pollTimeoutMs: 60_000, storePollMs: 50 },
          { store: new SqliteStore(file) },
        );
        for (const text of ['a', 'b', 'c']) await chat.send({ text });
        const poll = chat.recv('since=3');
        await until(() => chat.hub.waiting === 1, 'the poll to wait');
        // The operator, with a connection of their own.
        const operator = new Database(file);
        operator.prepare('DELETE FROM messages WHERE room = ?').run('main');
        operator.close();
        expect(await poll).toMatchObject({ messages: [], cursor: 0, reset: true });
        const next = chat.recv('since=0');
        await until(() => chat.hub.waiting === 1, 'the next poll to wait');
        await chat.send({ text: 'after the reset' });
        expect((await next).messages.map((m) => [m.id, m.text])).toEqual([[1, 'after the reset']]);
      } finally {
        await chat.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('does not reset a cursor that is only ahead of this process (another one stored it)', async () => {
      const store = new MemoryStore();
      chat = await startTestChat({ pollTimeoutMs: 60_000 }, { store });
      await store.append({ room: 'main', nickname: 'n', text: 'stored elsewhere' });
      const poll = chat.recv('since=1');
      await until(() => chat.hub.waiting === 1, 'the poll to wait');
      await chat.send({ text: 'next' });
      expect((await poll).reset).toBeUndefined();
    });
  });

  describe('online count', () => {
    it("answers a client's first poll at once, so a page shows the count when it opens", async () => {
      chat = await startTestChat({ pollTimeoutMs: 60_000 });
      await chat.send({ text: 'hello' });
      const first = await chat.recv('since=1&client=new-client');
      expect(first).toEqual({
        messages: [],
        cursor: 1,
        online: 1,
        people: peopleOf([DEFAULT_NICKNAME], 1),
      });
      const second = chat.recv('since=1&client=new-client');
      await until(() => chat.hub.waiting === 1, 'the second poll to wait');
      await chat.send({ text: 'and now?' });
      expect((await second).messages.map((m) => m.text)).toEqual(['and now?']);
    });

    it('tells a waiting poll within PRESENCE_NOTIFY_MS that someone joined', async () => {
      const clock = new ManualClock();
      chat = await startTestChat({ pollTimeoutMs: 60_000, presenceNotifyMs: 3_000 }, { clock });
      await chat.recv('since=0&client=first-tab'); // a first poll: answered at once
      const waiting = chat.recv('since=0&client=first-tab');
      await until(() => chat.hub.waiting === 1, 'the first tab to wait');
      const joined = await chat.recv('since=0&client=second-tab');
      expect(joined.online).toBe(2);
      clock.advance(2_999);
      expect(chat.hub.waiting).toBe(1);
      clock.advance(1);
      expect(await waiting).toEqual({
        messages: [],
        cursor: 0,
        online: 2,
        people: peopleOf([DEFAULT_NICKNAME, DEFAULT_NICKNAME], 2),
      });
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
      await until(() => chat.hub.waiting === 2, 'two polls to wait');
      expect(chat.presence.count('main')).toBe(2);

      leaving.abort();
      await first;
      await until(() => chat.hub.waiting === 1, 'the first poll to go');
      // It leaves the room a moment after its poll closed (a tab may take over).
      await until(() => chat.presence.count('main') === 1, 'the first client to leave');
      await chat.send({ text: 'who is here?' });
      expect((await second).online).toBe(1);
    });

    it('keeps a browser counted while another of its polls still waits', async () => {
      chat = await startTestChat({ pollTimeoutMs: 60_000 });
      await chat.recv('since=0&client=browser-one');
      await chat.recv('since=0&client=browser-two');
      // Two tabs of one browser, polling on their own with its one client id.
      const closing = new AbortController();
      const first = chat
        .get('/recv?since=0&client=browser-one', { signal: closing.signal })
        .catch(() => undefined);
      const other = chat.recv('since=0&client=browser-one');
      const watcher = chat.recv('since=0&client=browser-two');
      await until(() => chat.hub.waiting === 3, 'three polls to wait');

      closing.abort();
      await first;
      await until(() => chat.hub.waiting === 2, 'the closed tab to go');
      expect(chat.presence.count('main')).toBe(2);
      await chat.send({ text: 'still two browsers' });
      expect((await watcher).online).toBe(2);
      expect((await other).online).toBe(2);
    });

    it('counts a tab once however often it polls', async () => {
      const clock = new ManualClock();
      chat = await startTestChat({ pollTimeoutMs: 25_000 }, { clock });
      await chat.recv('since=0&client=same-tab-1'); // its first poll: answered at once
      for (const _ of [1, 2]) {
        const answer = chat.recv('since=0&client=same-tab-1');
        await until(() => chat.hub.waiting === 1, 'the poll to wait');
        clock.advance(25_000);
        expect((await answer).online).toBe(1);
      }
    });
  });
});
