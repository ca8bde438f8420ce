/**
 * The hub: delivery, from a stored message to every poll it concerns
 * (docs/design.md, "The hub"). The hot routes call it, and nothing else:
 * - `send(message)`: a new message (`POST /send`): appended to the store,
 *   then posted, within the one store deadline (`STORE_TIMEOUT_MS`).
 * - `post(message)`: a message the store has kept. The hub's message log
 *   takes it, its waiting polls are answered, and the bus carries it to the
 *   other processes.
 * - `poll(room, cursor, client, reply)`: answers at once what the log or the
 *   store has after the cursor, or holds the poll until something comes.
 * - `typed(room, client, nickname, stopped)`: someone types, or emptied their
 *   draft (`POST /typing`). Never stored: the room's polls here are woken
 *   for it at most every `typingWakeMs` (`typing.ts`), and the bus carries it
 *   to the other processes as an event, dropped if it cannot now.
 * - `onPollEnded`, `onDelivered`: the typed events of every poll it ends
 *   and every delivery (`report.ts`), for the log and the metrics.
 *
 * A poll's algorithm, with a cursor:
 * 1. what came after it, from the message log when it can vouch for it
 *    (answered at the end of the turn, with the turn's other catch-ups),
 *    else from the store (`store-reads.ts`);
 * 2. `reset` when the cursor is ahead of every message of the room (a reset
 *    database, deleted messages): the client reloads;
 * 3. at once, empty, a client the room had not seen, so a page shows the
 *    online count when it opens;
 * 4. otherwise the poll waits (`waiters.ts`).
 * Without a cursor (the 2011 client): it waits for the next message.
 *
 * It answers through `Replies` and reports through `PollEvents`, so it
 * imports nothing of HTTP and knows no status code. It runs on a `Clock`, so
 * its tests move its time by hand (test/helpers/manual-clock.ts).
 */
import type { Message } from '../../protocol/protocol.ts';
import type { Bus, BusEvent } from '../bus/bus.ts';
import type { Config } from '../core/config.ts';
import { raceDeadline } from '../core/deadline.ts';
import type { Log } from '../core/log.ts';
import type { Presence } from '../presence/presence.ts';
import { tagger } from '../presence/tag.ts';
import {
  type AppendResult,
  type MessageStore,
  type NewMessage,
  StoreUnavailableError,
} from '../store/store.ts';
import { Answers, listFor, NO_LIST } from './answers.ts';
import { type Clock, systemClock } from './clock.ts';
import { MessageLog, PAGE_SIZE } from './message-log.ts';
import type { Replies, Reply } from './reply.ts';
import { type PollEnded, PollEvents } from './report.ts';
import { StoreReads } from './store-reads.ts';
import { StoreWatch } from './store-watch.ts';
import { Typing } from './typing.ts';
import { type Refusal, Waiters } from './waiters.ts';

export type { Refusal };

export type HubConfig = Pick<
  Config,
  | 'pollTimeoutMs'
  | 'maxWaiters'
  | 'maxPollsPerAddress'
  | 'maxPollsPerClient'
  | 'presenceNotifyMs'
  | 'storeTimeoutMs'
  | 'storePollMs'
  | 'maxRooms'
  | 'roomIdleMs'
  | 'typingWakeMs'
  | 'deliveryBatchMs'
  | 'pollParkQuietMs'
  | 'typingTtlMs'
  | 'typistsPerAddress'
  | 'presenceTagSecret'
>;

/** What a poll may say besides its room, cursor and client (`/recv?nickname=&people=`). */
export interface PollExtras {
  /** The nickname the room lists this client under (undefined: Anonymous). */
  nickname?: string | undefined;
  /** The version of the room's list the client holds (undefined: none: the answer lists all). */
  people?: number | undefined;
}

export interface HubOptions<R extends Reply> {
  config: Readonly<HubConfig>;
  store: MessageStore;
  bus: Bus;
  presence: Presence;
  /** How a poll is answered, and who asked (server/http/poll-reply.ts). */
  replies: Replies<R>;
  log: Log;
  clock?: Clock;
}

/** A catch-up found in the log, answered at the end of the turn. */
interface Deferred<R> {
  reply: R;
  room: string;
  cursor: number;
  client: string | undefined;
  people: number | undefined;
  fresh: boolean;
  started: number;
  done: (refused: Refusal | undefined) => void;
  fail: (error: unknown) => void;
}

export class Hub<R extends Reply> {
  /** What this process knows of each room's latest messages. */
  readonly messages: MessageLog;
  /** Looks in the store for other processes' messages while the bus is not live. */
  readonly watch: StoreWatch;
  readonly #waiters: Waiters<R>;
  readonly #answers: Answers;
  readonly #reads: StoreReads;
  readonly #options: HubOptions<R>;
  readonly #clock: Clock;
  readonly #typing: Typing;
  readonly #events = new PollEvents<R>();
  /**
   * Rooms whose rename is on its way to the polls, each with its wake's
   * promise: one wake carries every rename meanwhile.
   */
  readonly #renaming = new Map<string, Promise<void>>();
  /** The poll's own touch was a rename (set by `#renamed`, read right after the touch). */
  #touchRenamed = false;
  #deferred: Deferred<R>[] = [];

  constructor(options: HubOptions<R>) {
    const { config, store, bus, presence, log } = options;
    this.#options = options;
    const clock = options.clock ?? systemClock;
    this.#clock = clock;
    // The polls' reads and the background ones (a gap, the store watch)
    // alike: the store wrapper tells the store's up/down state of each
    // (server/metrics/write-health.ts), and the background readers say what
    // failed in their own log lines.
    const reads = new StoreReads(store, { timeoutMs: config.storeTimeoutMs, log, clock });
    this.#reads = reads;
    this.messages = new MessageLog({
      reads,
      // Every message passes through this log, or reaches it through the
      // store watch within `storePollMs`: one process, or cluster workers,
      // whose IPC loses only a dead worker's last message. With a bus that
      // may drop a live process's message (Redis), a message it drops must
      // not leave a poll waiting: each poll asks the store (`Bus.reliable`).
      trustRing: bus.reliable,
      maxRooms: config.maxRooms,
      roomIdleMs: config.roomIdleMs,
      batchMs: config.deliveryBatchMs,
      // The log keeps the rooms where polls wait; read when it drops rooms, after construction.
      isWatched: (room) => this.#waiters.isWatched(room),
      log,
      clock,
    });
    this.#answers = new Answers(presence, this.messages);
    const waiters = new Waiters<R>({
      messages: this.messages,
      answers: this.#answers,
      reads: this.#reads,
      presence,
      replies: options.replies,
      events: this.#events,
      clock,
      pollTimeoutMs: config.pollTimeoutMs,
      maxWaiters: config.maxWaiters,
      maxPerAddress: config.maxPollsPerAddress,
      maxPerClient: config.maxPollsPerClient,
      presenceNotifyMs: config.presenceNotifyMs,
    });
    this.#waiters = waiters;
    bus.onMessage((message) => this.messages.accept(message));
    this.#typing = new Typing({
      clock,
      wakeMs: config.typingWakeMs,
      ttlMs: config.typingTtlMs,
      perAddress: config.typistsPerAddress,
      tagOf: tagger(config.presenceTagSecret),
      wake: (room, typists) => waiters.wake(room, typists),
    });
    bus.onEvent((event) => this.#onEvent(event));
    presence.onRename?.((room) => {
      this.#touchRenamed = true;
      this.#renamed(room, true);
    });
    // Every message this process delivers ends its author's typing here,
    // whichever way it came (a send, the bus, the store).
    this.messages.onAdvance((room, ring, from) => this.#typing.arrived(room, ring, from));
    this.watch = new StoreWatch({
      reads,
      messages: this.messages,
      // A reliable bus is looked past too: it may lose a dead process's message.
      busLive: () => bus.live && !bus.reliable,
      watched: () => waiters.watched(),
      intervalMs: config.storePollMs,
      log,
      clock,
    });
  }

  /** Waiting polls in this process. */
  get waiting(): number {
    return this.#waiters.size;
  }

  /** Rooms the message log holds in memory. */
  get rooms(): number {
    return this.messages.rooms;
  }

  /** True once `shutdown` ran: no poll waits and no send is taken. */
  get closed(): boolean {
    return this.#waiters.closed;
  }

  /**
   * A new message: appended, then posted once the store has it (rule 1: a
   * message is acknowledged only once durable). Rejects with
   * `StoreUnavailableError` when the store fails or does not answer within
   * `STORE_TIMEOUT_MS`; a write that lands after that is still posted, so
   * the message shows, and the sender's retry finds it by its key. The
   * store's up/down state hears of every send's outcome from the store
   * wrapper (server/metrics/write-health.ts), which takes the store down
   * at this same deadline: the race here is for the answer and the late post.
   */
  async send(message: NewMessage): Promise<AppendResult> {
    const { store, config } = this.#options;
    const appended = store.append(message);
    appended.then(
      (result) => this.post(result.message),
      () => {},
    );
    const ms = config.storeTimeoutMs;
    return raceDeadline(
      appended,
      ms,
      () => new StoreUnavailableError(`Storing the message took longer than ${ms} ms`),
      this.#clock,
    );
  }

  /**
   * A stored message: to this process's polls, and on the bus to the
   * others'. A repeat of a key is posted again: the first send's process may
   * have died between storing and posting; hubs drop what they already have.
   * Never throws: the message is stored, and polls with a cursor catch it up.
   */
  post(message: Message): void {
    try {
      this.messages.accept(message);
      this.#options.bus.publish(message);
    } catch (error) {
      this.#options.log('error', `hub: posting ${message.room}#${message.id} failed`, error);
    }
  }

  /**
   * A poll of `room` after `cursor` (undefined: the next message). Answers it
   * through `reply`, now or when something comes; resolves with why it could
   * not wait when it refused it (the lane writes that answer).
   */
  async poll(
    room: string,
    cursor: number | undefined,
    client: string | undefined,
    reply: R,
    extras: PollExtras = {},
  ): Promise<Refusal | undefined> {
    // A poll without a client id is never sent the list (`NO_LIST`).
    const people = client === undefined ? NO_LIST : extras.people;
    const started = this.#clock.now();
    // A poll's own address is checked only when it is to wait: most polls
    // are answered at once.
    const early = this.#waiters.refusal();
    if (early !== undefined) return early;
    this.#touchRenamed = false;
    // A poll that renames its client is answered at once too, with the new
    // list: it may come in before the room's wake and would wait on with the old one.
    const fresh =
      client !== undefined &&
      (this.#options.presence.touch(room, client, extras.nickname, () =>
        this.#options.replies.addressOf(reply),
      ) ||
        this.#touchRenamed);
    if (cursor === undefined) return this.#wait(reply, room, cursor, client, people);
    const found = this.messages.catchUp(room, cursor);
    if (found !== undefined && found.length > 0) {
      // Messages of a busy room not yet told to its polls: this poll waits
      // with them for the batch (`deliveryBatchMs`), and one answer carries
      // all. A poll to be answered at once (`fresh`) is.
      if (!fresh && this.messages.batching(room)) {
        return this.#wait(reply, room, cursor, client, people);
      }
      return new Promise((done, fail) => {
        this.#defer({ reply, room, cursor, client, people, fresh, started, done, fail });
      });
    }
    return this.#catchUpOrWait(reply, room, cursor, client, people, fresh, found, started);
  }

  /** Every poll the hub ends, answered or left by its client (`report.ts`). */
  onPollEnded(listener: (ended: PollEnded<R>) => void): void {
    this.#events.onPollEnded(listener);
  }

  /** Every delivery: `count` messages written to one poll. */
  onDelivered(listener: (count: number) => void): void {
    this.#events.onDelivered(listener);
  }

  /**
   * Someone types in `room`: this process's polls and, on the bus, the
   * others'. `address` is the client address that sent it: the event
   * carries it, so every process holds that address to the same
   * `typistsPerAddress` in the room. A typist past that cap is dropped here
   * and never published.
   */
  typed(room: string, client: string, nickname: string, stopped = false, address?: string): void {
    if (stopped) {
      this.#typing.stopped(room, client);
      this.#options.bus.publishEvent({ kind: 'typing', room, client, nickname, stopped: true });
      return;
    }
    if (!this.#typing.typed(room, client, nickname, address)) return;
    this.#options.bus.publishEvent({
      kind: 'typing',
      room,
      client,
      nickname,
      ...(address !== undefined && { address }),
    });
  }

  /**
   * Someone in `room` renamed (here, `publish`, or in another process): the
   * room's polls are woken as by the presence notice, only sooner, so the
   * same caps hold (the list changes as often as the room's bucket lets it:
   * steady-count.ts). With a shared view, the rename is sent to it first and
   * a fresh copy read back; then the other processes are told to do the same.
   */
  #renamed(room: string, publish: boolean): void {
    if (this.#renaming.has(room)) return;
    const { presence, bus } = this.#options;
    const tell = () => {
      this.#renaming.delete(room);
      if (this.closed) return;
      this.#waiters.wake(room);
      if (publish && presence.refresh) bus.publishEvent({ kind: 'people', room });
    };
    const told = presence.refresh
      ? presence.refresh([room], true).then(tell)
      : new Promise<void>((resolve) =>
          this.#clock.setImmediate(() => {
            tell();
            resolve();
          }),
        );
    this.#renaming.set(room, told);
  }

  #onEvent(event: BusEvent): void {
    if (event.kind === 'people') {
      this.#renamed(event.room, false);
      return;
    }
    if (event.stopped) this.#typing.stopped(event.room, event.client);
    else this.#typing.typed(event.room, event.client, event.nickname, event.address);
  }

  /** Answers every waiting poll, empty, and takes no more (graceful shutdown). */
  shutdown(): void {
    this.#waiters.shutdown();
    this.watch.close();
  }

  /** Frees the message log's timers and rooms; after `shutdown` and the server's close. */
  close(): void {
    this.watch.close();
    this.#typing.close();
    this.messages.close();
  }

  /**
   * Answer at the end of this turn of the event loop, not at once: the sends
   * read later in the same turn go into the same answer, so there are fewer
   * answers (writes) per delivered message (docs/design.md, "The hub"). One
   * turn of latency at most.
   */
  #defer(poll: Deferred<R>): void {
    this.#deferred.push(poll);
    if (this.#deferred.length === 1) this.#clock.setImmediate(() => this.#answerDeferred());
  }

  #answerDeferred(): void {
    const polls = this.#deferred;
    this.#deferred = [];
    for (const poll of polls) {
      const { reply, room, cursor, started } = poll;
      if (reply.destroyed) {
        // Gone meanwhile: nothing holds it.
        this.#events.ended(reply, room, 'gone', this.#clock.now() - started);
        poll.done(undefined);
        continue;
      }
      const found = this.messages.catchUp(room, cursor);
      if (found === undefined || found.length === 0) {
        // The room was dropped or reset meanwhile (the ring only grows within
        // a turn): the poll goes on as one the log could not answer.
        const { client, people, fresh } = poll;
        this.#catchUpOrWait(reply, room, cursor, client, people, fresh, found, started).then(
          poll.done,
          poll.fail,
        );
        continue;
      }
      this.#answer(
        reply,
        room,
        found,
        found[found.length - 1]!.id,
        poll.people,
        'message',
        started,
      );
      poll.done(undefined);
    }
  }

  /** Steps 1 to 4 (at the top) for a poll whose cursor the log could not answer with messages. */
  async #catchUpOrWait(
    reply: R,
    room: string,
    cursor: number,
    client: string | undefined,
    people: number | undefined,
    fresh: boolean,
    inLog: Message[] | undefined,
    started: number,
  ): Promise<Refusal | undefined> {
    let found = inLog ?? [];
    if (inLog === undefined) {
      const read = await this.#readAfter(room, cursor);
      found = read ?? [];
      // A message may have come while we read, and the log only tells waiters.
      if (found.length === 0) found = this.messages.catchUp(room, cursor) ?? [];
      if (found.length === 0 && read !== undefined) {
        const head = await this.#resetHead(room, cursor);
        if (head !== undefined)
          return this.#answer(reply, room, [], head, people, 'reset', started);
      }
    }
    if (found.length > 0) {
      const last = found[found.length - 1]!.id;
      // Read from the store past a hole at the cursor: a failed write's id,
      // or messages retention deleted, which the client is told of.
      const expired =
        inLog === undefined &&
        found[0]!.id > cursor + 1 &&
        ((await this.#reads.pruned(room)) ?? 0) > cursor;
      return this.#answer(reply, room, found, last, people, 'message', started, expired);
    }
    if (fresh) {
      // A rename still on its way (to a shared view: Redis, the cluster
      // primary) would be answered with the list from before it: the poll
      // is answered once the rename's wake has gone, with the new list. Not
      // by the wake itself: a poll that names no version (a page's first
      // poll under its new name) is not woken for a list (wakes.ts).
      const renaming = this.#renaming.get(room);
      if (renaming !== undefined) {
        await renaming;
        if (reply.destroyed) {
          this.#events.ended(reply, room, 'gone', this.#clock.now() - started);
          return undefined;
        }
      }
      return this.#answer(reply, room, [], cursor, people, 'presence', started);
    }
    return this.#wait(reply, room, cursor, client, people);
  }

  /**
   * The poll waits (or is refused). In a quiet room (`MessageLog.quiet`,
   * for `pollParkQuietMs`) it is likely to wait long, so the transport is
   * told it may park it (server/net/parking.ts); a busy room's polls are
   * answered soon, and parking them would cost more than it saves.
   */
  #wait(
    reply: R,
    room: string,
    cursor: number | undefined,
    client: string | undefined,
    people: number | undefined,
  ): Refusal | undefined {
    const refused = this.#waiters.wait(reply, room, cursor, client, people);
    const quietMs = this.#options.config.pollParkQuietMs;
    if (
      refused === undefined &&
      quietMs !== undefined &&
      !reply.writableEnded &&
      this.messages.quiet(room, quietMs)
    ) {
      this.#options.replies.park?.(reply);
    }
    return refused;
  }

  /** What the store says after `cursor`; undefined when it failed (the poll then waits). */
  async #readAfter(room: string, cursor: number): Promise<Message[] | undefined> {
    const found = await this.#reads.after(room, cursor, PAGE_SIZE);
    if (found && found.length < PAGE_SIZE) this.messages.seed(room, found);
    return found;
  }

  /**
   * The room's head when the cursor is ahead of it (the client must reset),
   * undefined when the cursor is fine. Asked only when the log knows no id at
   * or past the cursor, so a poll at the head of a known room costs nothing.
   */
  async #resetHead(room: string, cursor: number): Promise<number | undefined> {
    const knew = this.messages.lastId(room);
    if (cursor === 0 || (knew ?? -1) >= cursor) return undefined;
    const heads = await this.#reads.heads([room]);
    if (!heads) return undefined; // The store is down: no verdict; the poll waits.
    const head = heads.get(room) ?? 0;
    if (head >= cursor) {
      this.messages.noteHead(room, head);
      return undefined;
    }
    // Only what the log knew before the read proves the room reset: what it
    // took in while the read ran may be past the head the read saw (store-watch.ts).
    if ((knew ?? 0) > head) this.messages.reset(room, head);
    return head;
  }

  /**
   * An answer now, with the room's list if `known` (the poll's `people=`) is
   * not its version. A catch-up shares its body with the room's other polls
   * at that cursor and version.
   */
  #answer(
    reply: R,
    room: string,
    found: readonly Message[],
    cursor: number,
    known: number | undefined,
    outcome: 'message' | 'reset' | 'presence',
    started: number,
    expired = false,
  ): undefined {
    const body =
      outcome === 'message' && found.length > 0 && !expired
        ? this.#answers.catchUp(room, found, known)
        : this.#answers.body(room, found, cursor, {
            reset: outcome === 'reset',
            expired,
            people: listFor(this.#answers.people(room), known),
          });
    if (this.#options.replies.send(reply, body, false) && body.count > 0) {
      this.#events.delivered(body.count);
    }
    this.#events.ended(reply, room, outcome, this.#clock.now() - started);
    return undefined;
  }
}
