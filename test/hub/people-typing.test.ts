/**
 * The hub's side of who is here and who types (issue 21), on a manual clock:
 * the list travels only to polls whose version is not the room's, and a
 * room's polls are woken for typing at most every `typingWakeMs`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_NICKNAME, type Message } from '../../protocol/protocol.ts';
import type { Bus, BusEvent, BusEventHandler, BusHandler } from '../../server/bus/bus.ts';
import { peopleOf } from '../../server/presence/people.ts';
import { LocalPresence } from '../../server/presence/presence.ts';
import { ManualClock } from '../helpers/manual-clock.ts';
import { message } from '../helpers/message.ts';
import { createTestHub, nextTurn, stopTestHubs, TestReply } from './fixture.ts';

afterEach(() => {
  stopTestHubs();
});

/** A client's first poll (answered at once, with the list), then a poll that waits with its version. */
async function join(
  hub: ReturnType<typeof createTestHub>['hub'],
  client: string,
  nickname: string,
  cursor = 0,
): Promise<{ first: TestReply; waiting: TestReply }> {
  const first = new TestReply();
  await hub.poll('main', cursor, client, first, { nickname });
  const version = first.answer.people?.version;
  const waiting = new TestReply();
  await hub.poll('main', cursor, client, waiting, { nickname, people: version });
  return { first, waiting };
}

/** A bus whose other processes are the test: it hands on what the test says they published. */
class FakeBus implements Bus {
  readonly kind = 'redis';
  readonly live = true;
  readonly reliable = false;
  readonly events: BusEvent[] = [];
  #onMessage: BusHandler = () => {};
  #onEvent: BusEventHandler = () => {};
  publish(_message: Message): void {}
  onMessage(handler: BusHandler): void {
    this.#onMessage = handler;
  }
  publishEvent(event: BusEvent): void {
    this.events.push(event);
  }
  onEvent(handler: BusEventHandler): void {
    this.#onEvent = handler;
  }
  async close(): Promise<void> {}
  /** Another process published this message. */
  message(message: Message): void {
    this.#onMessage(message);
  }
  /** Another process published this event. */
  event(event: BusEvent): void {
    this.#onEvent(event);
  }
}

describe('who is here', () => {
  it("answers a client's first poll with the room's list, and not again while it holds it", async () => {
    const { hub, post } = createTestHub();
    const { first, waiting } = await join(hub, 'client-ann', 'Ann');
    expect(first.answer.people).toEqual(peopleOf(['Ann'], 1));
    const hello = await post('hello');
    await nextTurn();
    expect(waiting.answer.messages.map((m) => m.id)).toEqual([hello.id]);
    expect(waiting.answer).not.toHaveProperty('people');
  });

  it('sends the list again to the polls whose version it no longer is, sharing the bodies', async () => {
    const { hub, post } = createTestHub();
    const ann = await join(hub, 'client-ann', 'Ann');
    const bob = await join(hub, 'client-bob', 'Bob');
    // Bob joined after Ann's version: Ann holds an old list, Bob the current one.
    const both = peopleOf(['Ann', 'Bob'], 2);
    expect(bob.first.answer.people).toEqual(both);
    const carol = new TestReply();
    await hub.poll('main', 0, 'client-carol', carol, { nickname: 'Carol' });
    const carolWaits = new TestReply();
    await hub.poll('main', 0, 'client-carol', carolWaits, {
      nickname: 'Carol',
      people: carol.answer.people?.version,
    });
    await post('hi');
    await nextTurn();
    const three = peopleOf(['Ann', 'Bob', 'Carol'], 3);
    expect(ann.waiting.answer.people).toEqual(three);
    expect(bob.waiting.answer.people).toEqual(three);
    expect(carolWaits.answer).not.toHaveProperty('people');
    // Serialised once per delivery and kind of answer, not per poll.
    expect(ann.waiting.json).toBe(bob.waiting.json);
  });

  it('wakes a poll holding an old version within presenceNotifyMs when someone renames', async () => {
    const { hub, clock } = createTestHub({ presenceNotifyMs: 1_000 });
    const ann = await join(hub, 'client-ann', 'Ann');
    const bob = await join(hub, 'client-bob', 'Bob');
    await clock.advanceAsync(1_000); // Ann hears of Bob
    expect(ann.waiting.answer.people).toEqual(peopleOf(['Ann', 'Bob'], 2));
    expect(bob.waiting.answered).toBe(false);
    // Bob renames: same count, another list.
    await hub.poll('main', 0, 'client-bob', new TestReply(), { nickname: 'Robert' });
    await clock.advanceAsync(1_000);
    expect(bob.waiting.answer.people).toEqual(peopleOf(['Ann', 'Robert'], 2));
  });

  it('wakes the room at once when someone renames, not at the next presence notice', async () => {
    const { hub, clock } = createTestHub({ presenceNotifyMs: 3_000 });
    const ann = await join(hub, 'client-ann', 'Ann');
    const bob = await join(hub, 'client-bob', 'Bob');
    await clock.advanceAsync(3_000); // Ann hears of Bob
    const annWaits = new TestReply();
    await hub.poll('main', 0, 'client-ann', annWaits, {
      nickname: 'Ann',
      people: ann.waiting.answer.people?.version,
    });
    expect(bob.waiting.answered).toBe(false);
    // Bob's page sends its poll again under his new name.
    await hub.poll('main', 0, 'client-bob', new TestReply(), { nickname: 'Robert' });
    await nextTurn();
    expect(annWaits.answer.people).toEqual(peopleOf(['Ann', 'Robert'], 2));
  });

  it('answers the renaming poll itself with the new list, though it holds no version', async () => {
    const { hub } = createTestHub({ presenceNotifyMs: 60_000 });
    await join(hub, 'client-ann', 'Ann');
    await join(hub, 'client-bob', 'Bob');
    // The count stays 2 and the poll names no version: only the rename can answer it.
    const renaming = new TestReply();
    await hub.poll('main', 0, 'client-bob', renaming, { nickname: 'Robert' });
    await nextTurn();
    expect(renaming.answer.people).toEqual(peopleOf(['Ann', 'Robert'], 2));
  });

  it('caps the list at maxPeopleListed and counts the rest', async () => {
    // Every test poll comes from one address: the per-address cap is off here.
    const clock = new ManualClock();
    const presence = new LocalPresence(30_000, () => clock.now(), 10_000, 0);
    const { hub } = createTestHub({}, { presence, clock });
    for (let i = 0; i < 60; i += 1) {
      await hub.poll('main', 0, `client-${String(i).padStart(4, '0')}`, new TestReply(), {
        nickname: `N${String(i).padStart(2, '0')}`,
      });
    }
    const last = new TestReply();
    await hub.poll('main', 0, 'client-last', last);
    const people = last.answer.people!;
    expect(people.names).toHaveLength(50);
    expect(people.names[0]).toBe(DEFAULT_NICKNAME);
    expect(people.more).toBe(11);
  });

  it('never lists to a poll without a client id (the 2011 page, scripts)', async () => {
    const { hub, post } = createTestHub();
    await join(hub, 'client-ann', 'Ann');
    const old = new TestReply();
    await hub.poll('main', undefined, undefined, old);
    await post('hi');
    await nextTurn();
    expect(Object.keys(old.answer)).toEqual(['messages', 'cursor', 'online']);
  });
});

describe('who is typing', () => {
  it('wakes the waiting polls with the typist, the cursor unchanged, and stores nothing', async () => {
    const { hub, store, post, ended } = createTestHub();
    const hello = await post('hello');
    await nextTurn();
    const { waiting } = await join(hub, 'client-bob', 'Bob', hello.id);
    hub.typed('main', 'client-ann', 'Ann');
    expect(waiting.answer).toEqual({
      messages: [],
      cursor: hello.id,
      online: 1,
      typing: [{ nickname: 'Ann', client: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/) }],
      typingOnly: true,
    });
    expect(ended.at(-1)?.outcome).toBe('typing');
    expect(await store.after('main', 0, 10)).toEqual([hello]);
  });

  it('leaves the 2011 poll (no cursor) waiting for a message', async () => {
    const { hub, clock, post, waiting } = createTestHub({ typingWakeMs: 2_500 });
    const old = await waiting(undefined);
    for (let i = 0; i < 4; i += 1) {
      hub.typed('main', 'client-ann', 'Ann');
      await clock.advanceAsync(2_500);
    }
    expect(old.answered).toBe(false);
    const hi = await post('hi');
    await nextTurn();
    expect(old.answer.messages).toEqual([hi]);
  });

  it('wakes a room at most once per typingWakeMs however many type, naming them all', async () => {
    const { hub, clock } = createTestHub({ typingWakeMs: 2_500, typingTtlMs: 5_000 });
    await join(hub, 'client-zed', 'Zed');
    const poll = async () => {
      const reply = new TestReply();
      await hub.poll('main', 0, 'client-zed', reply, { nickname: 'Zed', people: 0 });
      return reply;
    };
    let reply = await poll();
    hub.typed('main', 'client-ann', 'Ann');
    expect(reply.answer.typing?.map((t) => t.nickname)).toEqual(['Ann']);
    reply = await poll();
    hub.typed('main', 'client-bob', 'Bob');
    hub.typed('main', 'client-cy', 'Cy');
    await clock.advanceAsync(2_499);
    expect(reply.answered).toBe(false);
    await clock.advanceAsync(1);
    expect(reply.answer.typing?.map((t) => t.nickname)).toEqual(['Ann', 'Bob', 'Cy']);
    expect(reply.answer.typingOnly).toBe(true);
  });

  it('tells the room when a typist stops, typingTtlMs after their last event', async () => {
    const { hub, clock } = createTestHub({ typingWakeMs: 2_500, typingTtlMs: 4_000 });
    await join(hub, 'client-zed', 'Zed');
    const reply = new TestReply();
    await hub.poll('main', 0, 'client-zed', reply, { nickname: 'Zed', people: 0 });
    hub.typed('main', 'client-ann', 'Ann');
    const next = new TestReply();
    await hub.poll('main', 0, 'client-zed', next, { nickname: 'Zed', people: 0 });
    await clock.advanceAsync(3_999);
    expect(next.answered).toBe(false);
    await clock.advanceAsync(1);
    expect(next.answer.typing).toEqual([]);
    expect(next.answer.typingOnly).toBe(true);
  });

  it("ends the typing of a message's author when the message arrives, with no wake of its own", async () => {
    const { hub, clock, store } = createTestHub({ typingWakeMs: 2_500, typingTtlMs: 5_000 });
    await join(hub, 'client-zed', 'Zed');
    const first = new TestReply();
    await hub.poll('main', 0, 'client-zed', first, { nickname: 'Zed', people: 0 });
    hub.typed('main', 'client-ann', 'Ann');
    hub.typed('main', 'client-bob', 'Bob');
    expect(first.answer.typing?.map((t) => t.nickname)).toEqual(['Ann']);
    const { message } = await store.append({ room: 'main', nickname: 'Ann', text: 'hi' });
    hub.post(message);
    await nextTurn();
    // The message answers the waiting poll; the owed wake later names Bob alone.
    const next = new TestReply();
    await hub.poll('main', message.id, 'client-zed', next, { nickname: 'Zed', people: 0 });
    await clock.advanceAsync(2_500);
    expect(next.answer.typing).toEqual([
      { nickname: 'Bob', client: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/) },
    ]);
  });

  it('ends the typing of an author whose message came from another process', async () => {
    const bus = new FakeBus();
    const { hub } = createTestHub({ typingWakeMs: 0, typingTtlMs: 5_000 }, { bus });
    await join(hub, 'client-zed', 'Zed');
    const poll = async (cursor: number) => {
      const reply = new TestReply();
      await hub.poll('main', cursor, 'client-zed', reply, { nickname: 'Zed', people: 0 });
      return reply;
    };
    let reply = await poll(0);
    bus.event({ kind: 'typing', room: 'main', client: 'client-ann', nickname: 'Ann' });
    expect(reply.answer.typing?.map((t) => t.nickname)).toEqual(['Ann']);
    reply = await poll(0);
    bus.message(message(1, 'main', { nickname: 'Ann', text: 'hi' }));
    await nextTurn();
    expect(reply.answer.messages.map((m) => m.text)).toEqual(['hi']);
    reply = await poll(1);
    bus.event({ kind: 'typing', room: 'main', client: 'client-bob', nickname: 'Bob' });
    expect(reply.answer.typing?.map((t) => t.nickname)).toEqual(['Bob']);
  });

  it('drops a typist who emptied their draft, told with the next wake, here and on the bus', async () => {
    const bus = new FakeBus();
    const { hub, clock } = createTestHub({ typingWakeMs: 2_500, typingTtlMs: 5_000 }, { bus });
    await join(hub, 'client-zed', 'Zed');
    const first = new TestReply();
    await hub.poll('main', 0, 'client-zed', first, { nickname: 'Zed', people: 0 });
    hub.typed('main', 'client-ann', 'Ann');
    const next = new TestReply();
    await hub.poll('main', 0, 'client-zed', next, { nickname: 'Zed', people: 0 });
    hub.typed('main', 'client-ann', 'Ann', true);
    expect(bus.events.at(-1)).toEqual({
      kind: 'typing',
      room: 'main',
      client: 'client-ann',
      nickname: 'Ann',
      stopped: true,
    });
    await clock.advanceAsync(2_500);
    expect(next.answer.typing).toEqual([]);
    expect(next.answer.typingOnly).toBe(true);
  });
});
