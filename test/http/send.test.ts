import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../server/store/memory-store.ts';
import {
  type AppendResult,
  type NewMessage,
  StoreUnavailableError,
} from '../../server/store/store.ts';
import { startTestChat, type TestChat, until } from '../helpers/chat.ts';
import { ManualClock } from '../helpers/manual-clock.ts';

let chat: TestChat;
afterEach(async () => {
  await chat?.close();
});

/** A real MemoryStore whose appends wait until the test lets them through (or fails them). */
class GatedStore extends MemoryStore {
  readonly pending: { input: NewMessage; release(): void; fail(error: Error): void }[] = [];
  override append(input: NewMessage): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      this.pending.push({
        input,
        release: () => resolve(super.append(input)),
        fail: reject,
      });
    });
  }
}

describe('POST /send', () => {
  describe('with JSON', () => {
    it('stores the message and answers with it', async () => {
      chat = await startTestChat();
      const res = await chat.post('/send', { text: '  hello  ', nickname: ' Ada ', room: 'dev' });
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body).toMatchObject({
        status: 'ok',
        id: 1,
        message: { id: 1, room: 'dev', nickname: 'Ada', text: 'hello' },
      });
      expect(new Date(body.message.time).toISOString()).toBe(body.message.time);
      expect(await chat.store.after('dev', 0, 10)).toEqual([body.message]);
    });

    it('defaults the nickname to Anonymous and the room to main', async () => {
      chat = await startTestChat();
      const { message } = await chat.send({ text: 'hi' });
      expect(message).toMatchObject({ room: 'main', nickname: 'Anonymous' });
    });

    it('accepts exactly 2000 characters, counted as people count them', async () => {
      chat = await startTestChat();
      const { message } = await chat.send({ text: '😀'.repeat(2000), nickname: 'é'.repeat(32) });
      expect([...message.text]).toHaveLength(2000);
    });
  });

  describe('with a form post (the 2011 client)', () => {
    it('stores the message, and a poll without cursor gets it', async () => {
      chat = await startTestChat();
      const poll = chat.recv('');
      await until(() => chat.hub.waiting === 1, 'the poll to wait');
      const res = await chat.get('/send', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' },
        body: 'nickname=Bob&text=hello+from+2011',
      });
      expect(res.status).toBe(200);
      const answer = await poll;
      expect(answer.messages).toMatchObject([{ nickname: 'Bob', text: 'hello from 2011' }]);
    });
  });

  describe('at the spellings of its path that Express routes too', () => {
    it('stores and answers as at /send, with the same headers', async () => {
      chat = await startTestChat();
      for (const path of ['/SEND', '/send/', '/send?from=bookmark']) {
        const res = await chat.post(path, { text: `via ${path}` });
        expect(res.status, path).toBe(200);
        expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
        expect(res.headers.get('x-request-id'), path).toMatch(/^[0-9a-f-]{36}$/);
        expect(res.headers.get('content-security-policy'), path).toBeNull();
      }
      const stored = await chat.store.after('main', 0, 10);
      expect(stored.map((m) => m.text)).toEqual([
        'via /SEND',
        'via /send/',
        'via /send?from=bookmark',
      ]);
    });
  });

  describe('with an idempotency key', () => {
    it('stores a repeated send once and answers with the first message', async () => {
      chat = await startTestChat();
      const first = await chat.send({ text: 'once', key: 'k-123' });
      const again = await chat.send({ text: 'once', key: 'k-123' });
      expect(again).toEqual(first);
      expect(await chat.store.after('main', 0, 10)).toHaveLength(1);
    });

    it('delivers a repeated send to waiting polls once', async () => {
      chat = await startTestChat();
      await chat.send({ text: 'once', key: 'k-1' });
      const poll = chat.recv('since=1');
      await until(() => chat.hub.waiting === 1, 'the poll to wait');
      await chat.send({ text: 'once', key: 'k-1' });
      await chat.send({ text: 'next', key: 'k-2' });
      expect((await poll).messages.map((m) => m.text)).toEqual(['next']);
    });

    it('treats the same key in another room as another message', async () => {
      chat = await startTestChat();
      await chat.send({ text: 'a', key: 'k' });
      const other = await chat.send({ text: 'b', key: 'k', room: 'dev' });
      expect(other.message).toMatchObject({ room: 'dev', text: 'b', id: 1 });
    });
  });

  describe('acknowledgement', () => {
    it('is not sent, nor delivered, before the store has the message', async () => {
      const store = new GatedStore();
      chat = await startTestChat({}, { store });
      const poll = chat.recv('since=0');
      await until(() => chat.hub.waiting === 1, 'the poll to wait');
      let acknowledged = false;
      const send = chat.send({ text: 'durable' }).then((body) => {
        acknowledged = true;
        return body;
      });
      await until(() => store.pending.length === 1, 'the append to reach the store');
      // Give the server every chance to answer early: several turns of the loop.
      for (let i = 0; i < 20; i += 1) await new Promise((r) => setImmediate(r));
      expect(acknowledged).toBe(false);
      expect(chat.hub.waiting).toBe(1);
      store.pending[0]!.release();
      const body = await send;
      expect((await poll).messages).toEqual([body.message]);
    });

    it('is a 503 with Retry-After when the store fails, and nothing is delivered', async () => {
      const store = new GatedStore();
      const clock = new ManualClock();
      chat = await startTestChat({ pollTimeoutMs: 25_000 }, { store, clock });
      const poll = chat.recv('since=0');
      await until(() => chat.hub.waiting === 1, 'the poll to wait');
      const send = chat.post('/send', { text: 'lost?' });
      await until(() => store.pending.length === 1, 'the append to reach the store');
      store.pending[0]!.fail(new StoreUnavailableError('disk on fire'));
      const res = await send;
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect((await res.json()).error.code).toBe('store_unavailable');
      expect(chat.hub.waiting).toBe(1); // nothing came: it waits out its timeout
      clock.advance(25_000);
      expect((await poll).messages).toEqual([]);
    });

    it('is a 503 when the store does not answer in time, and the late write still shows', async () => {
      const store = new GatedStore();
      chat = await startTestChat({ storeTimeoutMs: 100 }, { store });
      const res = await chat.post('/send', { text: 'slow', key: 'slow-1' });
      expect(res.status).toBe(503);
      const poll = chat.recv('since=0');
      await until(() => chat.hub.waiting === 1, 'the poll to wait');
      store.pending[0]!.release();
      expect((await poll).messages.map((m) => m.text)).toEqual(['slow']);
    });
  });
});
