/**
 * A hub on its own, for its unit tests: a real in-memory store, bus and
 * presence, replies that record what the hub writes, and a `ManualClock`
 * (test/helpers/manual-clock.ts) as the hub's clock and as the time of what
 * the fixture builds around it (the presence, the store wrapper). A test
 * that builds its own presence hands it the same clock (`parts.clock`).
 *
 * `setImmediate` stays real: the hub's end-of-turn batches run as they do
 * in the server, and a test waits for them (`nextTurn`) or for an answer
 * (`answered`), never for a span of time; it moves time with
 * `clock.advanceAsync(ms)`.
 */
import { EventEmitter, once } from 'node:events';
import type { Message, RecvAnswer } from '../../protocol/protocol.ts';
import { type Bus, LocalBus } from '../../server/bus/bus.ts';
import { defaults } from '../../server/core/config.ts';
import { silentLog } from '../../server/core/log.ts';
import type { Body } from '../../server/hub/body.ts';
import { Hub, type HubConfig } from '../../server/hub/hub.ts';
import type { Replies, Reply } from '../../server/hub/reply.ts';
import type { PollOutcome } from '../../server/hub/report.ts';
import type { OutageState } from '../../server/metrics/outage.ts';
import { WriteHealth } from '../../server/metrics/write-health.ts';
import { LocalPresence, type Presence } from '../../server/presence/presence.ts';
import { MemoryStore } from '../../server/store/memory-store.ts';
import type { MessageStore } from '../../server/store/store.ts';
import { ManualClock } from '../helpers/manual-clock.ts';

/** A reply that keeps what the hub answered it with, as a client would see it. */
export class TestReply extends EventEmitter implements Reply {
  writableEnded = false;
  destroyed = false;
  /** The body the hub answered with: polls that share one get the very same object. */
  body: Body | undefined;
  json: string | undefined;
  /** Answered as the server shut down (the transport closes the connection). */
  last = false;
  /** The hub told the transport it may park this poll (`Replies.park`). */
  parked = false;

  constructor(readonly address = '192.0.2.1') {
    super();
  }

  answerWith(body: Body, last: boolean): void {
    this.body = body;
    this.json = body.json;
    this.last = last;
    this.writableEnded = true;
    this.emit('answered');
  }

  /** The client goes away before its answer. */
  hangUp(): void {
    this.destroyed = true;
    this.emit('close');
  }

  get answered(): boolean {
    return this.json !== undefined;
  }

  get answer(): RecvAnswer {
    if (this.json === undefined) throw new Error('not answered');
    return JSON.parse(this.json) as RecvAnswer;
  }
}

export interface Ended {
  room: string;
  outcome: PollOutcome;
  ms: number;
}

export interface TestHubParts {
  store?: MessageStore;
  /** Default: a `LocalPresence` with the poll timeout plus 5 s as its window. */
  presence?: Presence;
  bus?: Bus;
  /**
   * The store's up/down state: the hub is then handed the store through its
   * one writer, the chat's store wrapper (`WriteHealth.track`), as in the
   * server. The fixture's `store` stays the bare one.
   */
  storeState?: OutageState;
  /** The hub's time and timers; default: a new `ManualClock`. Hubs that share one move together. */
  clock?: ManualClock;
}

const running: Array<Hub<TestReply>> = [];

export const hubConfig = (overrides: Partial<HubConfig> = {}): HubConfig => ({
  pollTimeoutMs: 25_000,
  maxWaiters: defaults.maxWaiters,
  maxPollsPerAddress: defaults.maxPollsPerAddress,
  maxPollsPerClient: defaults.maxPollsPerClient,
  presenceNotifyMs: 0,
  storeTimeoutMs: defaults.storeTimeoutMs,
  storePollMs: defaults.storePollMs,
  maxRooms: defaults.maxRooms,
  roomIdleMs: defaults.roomIdleMs,
  typingWakeMs: defaults.typingWakeMs,
  typingTtlMs: defaults.typingTtlMs,
  typistsPerAddress: defaults.typistsPerAddress,
  deliveryBatchMs: 0,
  pollParkQuietMs: undefined,
  presenceTagSecret: undefined,
  ...overrides,
});

export function createTestHub(overrides: Partial<HubConfig> = {}, parts: TestHubParts = {}) {
  const store = parts.store ?? new MemoryStore();
  const clock = parts.clock ?? new ManualClock();
  const now = () => clock.now();
  const config = hubConfig(overrides);
  const presence = parts.presence ?? new LocalPresence(config.pollTimeoutMs + 5_000, now);
  const ended: Ended[] = [];
  const counts = { delivered: 0, addressReads: 0 };
  const replies: Replies<TestReply> = {
    send(reply, body, last) {
      if (reply.writableEnded || reply.destroyed) return false;
      reply.answerWith(body, last);
      return true;
    },
    addressOf(reply) {
      counts.addressReads += 1;
      return reply.address;
    },
    park(reply) {
      reply.parked = true;
    },
  };
  const tracked = parts.storeState
    ? new WriteHealth({
        timeoutMs: config.storeTimeoutMs,
        windowMs: 30_000,
        now,
        timers: clock,
      }).track(store, parts.storeState)
    : store;
  const hub = new Hub<TestReply>({
    config,
    store: tracked,
    bus: parts.bus ?? new LocalBus(),
    presence,
    replies,
    log: silentLog,
    clock,
  });
  hub.onPollEnded(({ room, outcome, ms }) => ended.push({ room, outcome, ms }));
  hub.onDelivered((count) => {
    counts.delivered += count;
  });
  running.push(hub);

  /** Stores a message and posts it, as `POST /send` does. */
  async function post(text: string, room = 'main'): Promise<Message> {
    const { message } = await store.append({ room, nickname: 'n', text });
    hub.post(message);
    return message;
  }

  /** A poll that is to wait: resolves once the hub holds it. */
  async function waiting(cursor: number | undefined, room = 'main', reply = new TestReply()) {
    const refused = await hub.poll(room, cursor, undefined, reply);
    if (refused !== undefined) throw new Error(`refused: ${refused}`);
    return reply;
  }

  return { hub, store, presence, clock, ended, counts, post, waiting };
}

/** Resolves after the hub's end-of-turn batches (and the promises before them) ran. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Resolves when the hub writes `reply`'s answer. */
export async function answered(reply: TestReply): Promise<TestReply> {
  if (!reply.answered) await once(reply, 'answered');
  return reply;
}

export function stopTestHubs(): void {
  for (const hub of running.splice(0)) {
    hub.shutdown();
    hub.close();
  }
}
