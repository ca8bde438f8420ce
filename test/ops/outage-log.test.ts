/**
 * A store outage is logged once when it starts and once when it ends, at
 * WARN, not once per failed request with a stack (server/metrics/outage.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../server/store/memory-store.ts';
import { StoreUnavailableError } from '../../server/store/store.ts';
import { startTestChat, type TestChat, until } from '../helpers/chat.ts';
import { captureLog } from './log-capture.ts';

let chat: TestChat | undefined;
afterEach(async () => {
  await chat?.close();
  chat = undefined;
});

/** A real MemoryStore that a test can take down and bring back. */
class SwitchableStore extends MemoryStore {
  down = false;
  #check(): void {
    if (this.down) throw new StoreUnavailableError('MySQL cannot be used now: ECONNREFUSED');
  }
  override async after(room: string, since: number, limit: number) {
    this.#check();
    return super.after(room, since, limit);
  }
  override async before(room: string, before: number | undefined, limit: number) {
    this.#check();
    return super.before(room, before, limit);
  }
  override async heads(rooms: readonly string[]) {
    this.#check();
    return super.heads(rooms);
  }
  override async append(...args: Parameters<MemoryStore['append']>) {
    this.#check();
    return super.append(...args);
  }
  override async ping() {
    this.#check();
  }
}

describe('when the store goes down and comes back', () => {
  it('logs the outage once at WARN when it starts and once when it ends, without a stack', async () => {
    const store = new SwitchableStore();
    const captured = captureLog();
    chat = await startTestChat({}, { store, log: captured.log });
    await chat.send({ text: 'before' });

    store.down = true;
    const failed = await Promise.all([
      ...Array.from({ length: 5 }, () => chat!.get('/history')),
      chat.post('/send', { text: 'during' }),
      chat.get('/health'),
    ]);
    expect(failed.map((res) => res.status)).toEqual([503, 503, 503, 503, 503, 503, 503]);
    store.down = false;
    // A good read does not end it: a send failed, and only a stored send shows writes work again.
    expect((await chat.get('/history')).status).toBe(200);
    expect(captured.lines.filter((line) => line.state === 'up')).toEqual([]);
    expect((await chat.post('/send', { text: 'after' })).status).toBe(200);
    await captured.next((line) => line.state === 'up', 'the end of the outage');

    const outage = captured.lines.filter((line) => line.backend === 'store');
    expect(outage).toMatchObject([
      {
        level: 'warn',
        msg: 'store unavailable',
        state: 'down',
        error: expect.stringContaining('ECONNREFUSED'),
      },
      {
        level: 'warn',
        state: 'up',
        msg: expect.stringMatching(/^store available again after \d+ s$/),
      },
    ]);
    expect(captured.lines.filter((line) => line.level === 'error')).toEqual([]);
    expect(captured.text).not.toContain('    at ');
    // Each failed request is still a line of the request log, at info.
    expect(captured.lines.filter((line) => line.status === 503)).toHaveLength(7);
  });

  it("takes the one state down once for a poll's read, a send and /health alike", async () => {
    const store = new SwitchableStore();
    const captured = captureLog();
    // The store watch stays quiet: only the call under test reads the store.
    chat = await startTestChat(
      { pollTimeoutMs: 300, storePollMs: 60_000 },
      { store, log: captured.log },
    );
    const errors = async () => {
      const text = await (await chat!.get('/metrics')).text();
      return Number(/^chat_store_errors_total (\S+)$/m.exec(text)?.[1]);
    };
    const outages = () =>
      captured.lines.filter((line) => line.backend === 'store').map((line) => line.state);
    const calls: Record<string, () => Promise<unknown>> = {
      // A cursor in a room this process has not seen: the poll reads the store, then waits.
      "a poll's read": () => chat!.recv('room=elsewhere&since=5'),
      'a send': () => chat!.post('/send', { text: 'during' }),
      '/health': () => chat!.get('/health'),
    };
    let rounds = 0;
    for (const [what, call] of Object.entries(calls)) {
      const before = await errors();
      store.down = true;
      await call();
      store.down = false;
      expect(await errors(), what).toBe(before + 1);
      expect(outages(), what).toEqual([...Array(rounds).fill(['down', 'up']).flat(), 'down']);
      // A stored send ends any outage, a send's too (the writes work again).
      expect((await chat.post('/send', { text: 'after' })).status).toBe(200);
      rounds += 1;
      await until(() => outages().length === rounds * 2, `the end of the outage of ${what}`);
    }
    expect(outages()).toEqual(['down', 'up', 'down', 'up', 'down', 'up']);
  });

  it('says so in the metrics: store errors and the store state', async () => {
    const store = new SwitchableStore();
    chat = await startTestChat({}, { store });
    const metric = async (name: string) => {
      const text = await (await chat!.get('/metrics')).text();
      return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    };
    expect(await metric('chat_store_up')).toBe(1);
    store.down = true;
    await chat.get('/history');
    await chat.get('/history');
    expect(await metric('chat_store_up')).toBe(0);
    expect(await metric('chat_store_errors_total')).toBe(2);
    store.down = false;
    await chat.get('/health');
    expect(await metric('chat_store_up')).toBe(1);
  });

  it('keeps the store down while its writes fail, however well it reads (no flapping)', async () => {
    const store = new SwitchableStore();
    chat = await startTestChat({}, { store });
    const metric = async (name: string) => {
      const text = await (await chat!.get('/metrics')).text();
      return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    };
    store.down = true;
    expect((await chat.post('/send', { text: 'lost?' })).status).toBe(503);
    store.down = false;
    // On the old code each good read flipped chat_store_up back to 1 and /health said 200.
    expect((await chat.get('/history')).status).toBe(200);
    expect(await metric('chat_store_up')).toBe(0);
    expect((await chat.get('/health')).status).toBe(503);
    expect((await chat.post('/send', { text: 'stored' })).status).toBe(200);
    expect(await metric('chat_store_up')).toBe(1);
    expect((await chat.get('/health')).status).toBe(200);
  });
});
