/**
 * Leader election over a BroadcastChannel, for pages without Web Locks
 * (`navigator.locks` exists only in secure contexts: plain HTTP on a LAN
 * address or a host name has none).
 *
 * - The leader sends a heartbeat (`beat`) every `beatMs`, and at once when
 *   its visibility changes.
 * - A leader that leaves (`withdraw`, on `pagehide` or `freeze`) says so,
 *   and the followers claim at once: that is the failover of a closed tab.
 * - A follower that hears no beat for `silenceMs` (a visible leader) or
 *   `hiddenSilenceMs` (a hidden one, whose timers the browser throttles to
 *   once a second, or once a minute after five minutes) claims the lead:
 *   the leader crashed. The silence is long against the beat on purpose: on
 *   a busy machine a tab's timers run late, and every false claim is a
 *   second poll holding one of the browser's six connections for a moment.
 * - Claims are settled by rank: a visible tab outranks a hidden one, then
 *   the larger id wins. A claimant that hears a better claim, or a beat,
 *   within `claimMs` stands down; the best one leads.
 * - Two leaders (a beat that came late on a busy machine, a handover by
 *   `seize`) settle by rank too: visible first, then the one that has led
 *   longer, so a tab that claimed too soon does not depose a leader that
 *   was only slow. The one that hears a better leader's beat steps down.
 *   Until then both poll, and the tabs drop what they already have: nothing
 *   shows twice.
 */
import type { Election, ElectionEvents } from './election.ts';

export interface ChannelElectionOptions {
  /** This tab's random id. */
  id: string;
  visible(): boolean;
  beatMs?: number;
  silenceMs?: number;
  hiddenSilenceMs?: number;
  claimMs?: number;
  /** How long a tab that starts standing listens for a beat before it claims. */
  joinMs?: number;
  now?: () => number;
}

type Vote =
  | { kind: 'beat'; from: string; visible: boolean; since: number }
  | { kind: 'claim'; from: string; visible: boolean }
  | { kind: 'leaving'; from: string };

/**
 * `data` as a vote, or undefined: any page of the origin can post on the
 * channel, and a vote of the wrong shape is dropped rather than read.
 */
function parseVote(data: unknown): Vote | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const vote = data as Record<string, unknown>;
  const { from } = vote;
  if (typeof from !== 'string' || from.length === 0 || from.length > 64) return undefined;
  switch (vote.kind) {
    case 'beat':
      if (typeof vote.since !== 'number' || !Number.isFinite(vote.since)) return undefined;
      return typeof vote.visible === 'boolean' ? (vote as Vote) : undefined;
    case 'claim':
      return typeof vote.visible === 'boolean' ? (vote as Vote) : undefined;
    case 'leaving':
      return vote as Vote;
    default:
      return undefined;
  }
}

type State = 'idle' | 'following' | 'claiming' | 'leading';

export class ChannelElection implements Election {
  #state: State = 'idle';
  /** When the leader was last heard (following), or when the claim began (claiming). */
  #since = 0;
  #leaderVisible = true;
  /** When this tab began to lead. */
  #ledSince = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  readonly #channel: BroadcastChannel;
  readonly #events: ElectionEvents;
  readonly #id: string;
  readonly #visible: () => boolean;
  readonly #beatMs: number;
  readonly #silenceMs: number;
  readonly #hiddenSilenceMs: number;
  readonly #claimMs: number;
  readonly #joinMs: number;
  readonly #now: () => number;

  constructor(name: string, events: ElectionEvents, options: ChannelElectionOptions) {
    this.#events = events;
    this.#id = options.id;
    this.#visible = options.visible;
    this.#beatMs = options.beatMs ?? 250;
    this.#silenceMs = options.silenceMs ?? 3_000;
    this.#hiddenSilenceMs = options.hiddenSilenceMs ?? 70_000;
    this.#claimMs = options.claimMs ?? 200;
    this.#joinMs = options.joinMs ?? 600;
    this.#now = options.now ?? Date.now;
    this.#channel = new BroadcastChannel(name);
    this.#channel.onmessage = (event: MessageEvent<unknown>) => {
      const vote = parseVote(event.data);
      if (vote) this.#onVote(vote);
    };
  }

  get leading(): boolean {
    return this.#state === 'leading';
  }

  stand(): void {
    if (this.#state !== 'idle') return;
    this.#state = 'following';
    // As if the leader had last been heard just long enough ago that a silent room is claimed after `joinMs`.
    this.#since = this.#now() - this.#silenceMs + this.#joinMs;
    this.#leaderVisible = true;
    this.#timer = setInterval(() => this.#tick(), this.#beatMs);
  }

  withdraw(): void {
    if (this.#state === 'idle') return;
    const was = this.#state;
    this.#state = 'idle';
    clearInterval(this.#timer);
    this.#timer = undefined;
    if (was === 'leading') {
      this.#post({ kind: 'leaving', from: this.#id });
      this.#events.onDeposed();
    }
  }

  seize(): void {
    if (this.#state === 'leading') return;
    if (this.#state === 'idle') this.stand();
    this.#lead();
  }

  close(): void {
    this.withdraw();
    this.#channel.close();
  }

  /** Proof of life other than a beat: an answer or a status the leader handed on. */
  heard(): void {
    if (this.#state === 'following') this.#since = Math.max(this.#since, this.#now());
  }

  /** The leader's visibility changed: the followers must hear it before its timers slow down. */
  announce(): void {
    if (this.#state === 'leading') this.#beat();
  }

  #tick(): void {
    const now = this.#now();
    switch (this.#state) {
      case 'leading':
        this.#beat();
        return;
      case 'following': {
        const silence = this.#leaderVisible ? this.#silenceMs : this.#hiddenSilenceMs;
        if (now - this.#since > silence) this.#claim();
        return;
      }
      case 'claiming':
        if (now - this.#since >= this.#claimMs) this.#lead();
        return;
      case 'idle':
        return;
    }
  }

  #onVote(vote: Vote): void {
    if (this.#state === 'idle' || vote.from === this.#id) return;
    switch (vote.kind) {
      case 'beat':
        if (this.#state === 'leading') {
          if (!this.#leadsOver(vote)) this.#follow(vote.visible);
          else this.#beat(); // Tell the other leader who wins.
          return;
        }
        this.#follow(vote.visible);
        return;
      case 'claim':
        if (this.#state === 'leading') this.#beat();
        else if (this.#state === 'claiming' && !this.#outranks(vote)) this.#follow(true);
        return;
      case 'leaving':
        if (this.#state === 'following') this.#claim();
        return;
    }
  }

  /** Whether this tab ranks above the sender of `vote`. */
  #outranks(vote: { from: string; visible: boolean }): boolean {
    const visible = this.#visible();
    if (visible !== vote.visible) return visible;
    return this.#id > vote.from;
  }

  /** Whether this leader stays when it hears the beat of another. */
  #leadsOver(beat: { from: string; visible: boolean; since: number }): boolean {
    const visible = this.#visible();
    if (visible !== beat.visible) return visible;
    if (this.#ledSince !== beat.since) return this.#ledSince < beat.since;
    return this.#id > beat.from;
  }

  #follow(leaderVisible: boolean): void {
    const wasLeading = this.#state === 'leading';
    this.#state = 'following';
    this.#since = this.#now();
    this.#leaderVisible = leaderVisible;
    if (wasLeading) this.#events.onDeposed();
  }

  #claim(): void {
    this.#state = 'claiming';
    this.#since = this.#now();
    this.#post({ kind: 'claim', from: this.#id, visible: this.#visible() });
  }

  #lead(): void {
    this.#state = 'leading';
    this.#ledSince = this.#now();
    this.#beat();
    this.#events.onElected();
  }

  #beat(): void {
    this.#post({ kind: 'beat', from: this.#id, visible: this.#visible(), since: this.#ledSince });
  }

  #post(vote: Vote): void {
    this.#channel.postMessage(vote);
  }
}
