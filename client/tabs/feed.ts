/**
 * A room's feed of `/recv` answers for one tab: what the page wires to.
 *
 * - `SoloFeed`: the tab polls for itself (no BroadcastChannel: an old
 *   browser, some embedded views).
 * - `SharedFeed`: the tabs of the browser that show the room elect one
 *   leader (`election.ts`), which runs the long poll and hands every answer
 *   to the others over a BroadcastChannel (`notes.ts`). A browser holds one
 *   waiting poll per room, however many tabs are open, so its six
 *   connections to the server are not used up by polls (docs/long-polling.md,
 *   "Six connections per browser").
 *
 * Either way each tab applies every answer against its own cursor
 * (`room-state.ts`), so a tab that takes over polls from what it shows:
 * nothing is lost at a failover, and what two leaders both got shows once.
 */
import { limits, type RecvAnswer } from '../../protocol/protocol.ts';
import { type ApiError, history, type ping, type recv } from '../api.ts';
import type { BackoffOptions } from '../backoff.ts';
import { randomId } from '../ids.ts';
import { type ConnectionStatus, Poller } from '../poll.ts';
import { RoomState, type RoomStateOptions } from '../room-state.ts';
import type { Election, ElectionFactory } from './election.ts';
import { fromWire, parseNote, type TabNote, toWire } from './notes.ts';
import type { PageEvent, PageLife } from './page-life.ts';

export interface FeedOptions extends Omit<RoomStateOptions, 'cursor'> {
  room: string;
  /** The browser's client id (`client-id.ts`), read when this tab starts to poll. */
  client(): string;
  /** Extra query parameters of each poll, read before it leaves, in the tab that polls. */
  query?: () => Record<string, string>;
  /** The connection status of the tab that polls, shown in every tab. */
  onStatus(status: ConnectionStatus, error?: ApiError): void;
  recv?: typeof recv;
  ping?: typeof ping;
  backoff?: BackoffOptions;
}

export interface Feed {
  /** Starts from `cursor`, the id of the newest message the page shows. */
  start(cursor: number): void;
  /** Cuts a backoff wait short (the browser is back online). */
  wake(): void;
  /** The tab that polls sends its next poll now (`Poller.repoll`); in the others, nothing. */
  repoll(): void;
  /** Whether this tab runs the room's poll (the one that notifies: notify.ts). */
  readonly leading: boolean;
  stop(): void;
}

/** A hidden leader hands over at most once in this long, however many visible tabs say hello. */
const HANDOVER_MS = 1_000;

function pollerFor(
  options: FeedOptions,
  state: RoomState,
  overrides: Partial<ConstructorParameters<typeof Poller>[0]> = {},
): Poller {
  return new Poller({
    room: options.room,
    client: options.client(),
    cursor: () => state.cursor,
    query: options.query,
    onAnswer: (answer) => state.apply(answer),
    onStatus: options.onStatus,
    recv: options.recv,
    ping: options.ping,
    backoff: options.backoff,
    ...overrides,
  });
}

export class SoloFeed implements Feed {
  #poller: Poller | undefined;
  /** Every tab polls for itself here. */
  readonly leading = true;
  readonly #options: FeedOptions;

  constructor(options: FeedOptions) {
    this.#options = options;
  }

  start(cursor: number): void {
    const state = new RoomState({ ...this.#options, cursor });
    this.#poller = pollerFor(this.#options, state);
    this.#poller.start();
  }

  wake(): void {
    this.#poller?.wake();
  }

  repoll(): void {
    this.#poller?.repoll();
  }

  stop(): void {
    this.#poller?.stop();
  }
}

export interface SharedFeedOptions extends FeedOptions {
  election: ElectionFactory;
  page: PageLife;
  /** This tab's id among the room's tabs. @default random */
  id?: string;
}

export class SharedFeed implements Feed {
  readonly #id: string;
  readonly #options: SharedFeedOptions;
  readonly #channel: BroadcastChannel;
  readonly #election: Election;
  #state: RoomState | undefined;
  /** Answers heard before `start`: applied once the page shows its first page. */
  #early: RecvAnswer[] = [];
  #poller: Poller | undefined;
  #status: ConnectionStatus = 'connecting';
  #error: ApiError | undefined;
  /** The leader's `people` and `typing` as last heard, and its online count: for a tab that joins. */
  #latest: Pick<RecvAnswer, 'online' | 'people' | 'typing'> | undefined;
  #handedOverAt = Number.NEGATIVE_INFINITY;
  /** The hidden leader this tab asked to hand over, so it asks once. */
  #asked: string | undefined;
  #unlisten: () => void = () => {};

  constructor(options: SharedFeedOptions) {
    this.#options = options;
    this.#id = options.id ?? randomId();
    // Listening before the page loads its first page: an answer the leader
    // hands on meanwhile is kept, so none falls between the two.
    this.#channel = new BroadcastChannel(`lpchat:${options.room}`);
    this.#channel.onmessage = (event: MessageEvent<unknown>) => {
      const note = parseNote(event.data, options.room);
      if (note) this.#onNote(note);
    };
    this.#election = options.election(`lpchat:${options.room}`, {
      onElected: () => this.#onElected(),
      onDeposed: () => this.#onDeposed(),
    });
  }

  get leading(): boolean {
    return this.#election.leading;
  }

  start(cursor: number): void {
    const state = new RoomState({
      ...this.#options,
      cursor,
      onAnswer: (answer) => {
        this.#remember(answer);
        this.#options.onAnswer?.(answer);
      },
      catchUp: (before) => history(this.#options.room, before, limits.pageSize),
    });
    this.#state = state;
    for (const answer of this.#early) void state.apply(answer, true);
    this.#early = [];
    this.#unlisten = this.#options.page.listen((event) => this.#onPage(event));
    this.#election.stand();
    this.#hello();
  }

  wake(): void {
    this.#poller?.wake();
  }

  repoll(): void {
    this.#poller?.repoll();
  }

  stop(): void {
    this.#unlisten();
    this.#election.close();
    this.#channel.close();
  }

  #onElected(): void {
    const state = this.#state;
    if (!state) return;
    this.#poller?.stop();
    this.#poller = pollerFor(this.#options, state, {
      onAnswer: (answer) => {
        this.#post({ kind: 'answer', from: this.#id, answer });
        return state.apply(answer);
      },
      onStatus: (status, error) => this.#showStatus(status, error),
    });
    this.#poller.start();
    this.#postStatus();
  }

  #onDeposed(): void {
    this.#poller?.stop();
    this.#poller = undefined;
  }

  #onNote(note: TabNote): void {
    if (note.from === this.#id) return;
    if (note.kind === 'answer' || note.kind === 'status') this.#election.heard?.();
    switch (note.kind) {
      case 'answer':
        if (note.to !== undefined && note.to !== this.#id) return;
        if (this.#state) void this.#state.apply(note.answer, true);
        else this.#early.push(note.answer);
        return;
      case 'status':
        if (this.leading) return; // Two leaders for a moment: the election settles it.
        this.#showStatus(note.status, fromWire(note.error));
        if (note.visible) this.#asked = undefined;
        else if (this.#options.page.visible() && this.#asked !== note.from) {
          this.#asked = note.from;
          this.#hello();
        }
        return;
      case 'hello':
        if (!this.leading || !this.#state) return;
        this.#postStatus();
        if (this.#latest) {
          const answer = { messages: [], cursor: this.#state.cursor, ...this.#latest };
          this.#post({ kind: 'answer', from: this.#id, answer, to: note.from });
        }
        if (note.visible && !this.#options.page.visible()) this.#handOver(note.from);
        return;
      case 'handover':
        if (note.to === this.#id && this.#state) this.#election.seize();
        return;
    }
  }

  #onPage(event: PageEvent): void {
    switch (event) {
      case 'visible':
      case 'hidden':
        this.#election.announce?.();
        if (this.leading) this.#postStatus();
        else if (event === 'visible') this.#hello();
        return;
      case 'frozen':
      case 'left':
        this.#election.withdraw();
        return;
      case 'resumed':
      case 'back':
        this.#election.stand();
        this.#hello();
        return;
    }
  }

  #handOver(to: string): void {
    const now = Date.now();
    if (now - this.#handedOverAt < HANDOVER_MS) return;
    this.#handedOverAt = now;
    this.#post({ kind: 'handover', from: this.#id, to });
  }

  #remember(answer: RecvAnswer): void {
    this.#latest = {
      online: answer.online,
      people: answer.people ?? this.#latest?.people,
      typing: answer.typing,
    };
  }

  #showStatus(status: ConnectionStatus, error: ApiError | undefined): void {
    this.#status = status;
    this.#error = error;
    this.#options.onStatus(status, error);
    if (this.leading) this.#postStatus();
  }

  #postStatus(): void {
    this.#post({
      kind: 'status',
      from: this.#id,
      status: this.#status,
      error: toWire(this.#error),
      visible: this.#options.page.visible(),
    });
  }

  #hello(): void {
    this.#post({ kind: 'hello', from: this.#id, visible: this.#options.page.visible() });
  }

  #post(note: TabNote): void {
    this.#channel.postMessage(note);
  }
}
