/**
 * Leader election through the Web Locks API: the tab that holds the room's
 * lock leads. The others wait in the lock's queue, and the browser grants it
 * to the next one as soon as the leader releases it, closes or crashes, so a
 * failover costs no timeout at all.
 *
 * - A handover is a steal (`steal: true`): the new leader gets the lock at
 *   once, and the old one's request rejects with an `AbortError`, which is
 *   how it learns it was deposed.
 * - Each request has a ticket. A grant for a request that was given up
 *   meanwhile (withdrawn, or replaced by a steal) is released at once.
 * - With `heartbeat`, the leader beats on a BroadcastChannel, and a follower
 *   that hears nothing from it for `silenceMs` steals the lock. The browser
 *   frees a lock only when its tab closes or crashes, not when the tab's
 *   thread hangs (a busy loop, a debugger): without the beat, a hung leader
 *   would keep the lock, and every tab would wait for it. A follower waits a
 *   random part of `jitterMs` more, so one of them steals, not all at once.
 *   The hung leader's request rejects meanwhile; when its thread runs again
 *   it reads that first and stops its poll, so two tabs poll for a moment
 *   at most. A hidden leader's timers are throttled, so its silence counts
 *   only past `hiddenSilenceMs`.
 *
 * See https://developer.mozilla.org/docs/Web/API/Web_Locks_API
 */
import type { Election, ElectionEvents } from './election.ts';

export interface LockHeartbeat {
  /** This tab's id (the beats name the leader). */
  id: string;
  visible(): boolean;
  /** The channel the beats go on (the room's lock name plus `:beat`). */
  channel: string;
  beatMs?: number;
  silenceMs?: number;
  hiddenSilenceMs?: number;
  jitterMs?: number;
  now?: () => number;
  random?: () => number;
}

/** A beat as it crosses the channel; anything else on it is dropped. */
interface Beat {
  kind: 'beat';
  from: string;
  visible: boolean;
}

function isBeat(data: unknown): data is Beat {
  if (typeof data !== 'object' || data === null) return false;
  const beat = data as Record<string, unknown>;
  return (
    beat.kind === 'beat' &&
    typeof beat.from === 'string' &&
    beat.from.length <= 64 &&
    typeof beat.visible === 'boolean'
  );
}

export class LockElection implements Election {
  #standing = false;
  #ticket = 0;
  /** The ticket of the request that holds the lock, if one does. */
  #held: number | undefined;
  #release: (() => void) | undefined;
  #queued: AbortController | undefined;
  readonly #locks: LockManager;
  readonly #name: string;
  readonly #events: ElectionEvents;
  readonly #beat: Required<Omit<LockHeartbeat, 'channel'>> | undefined;
  #channel: BroadcastChannel | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** When the leader was last heard, and whether it was seen then. */
  #heardAt = 0;
  #leaderVisible = true;
  /** This follower's extra wait before it steals, drawn anew each time it hears the leader. */
  #jitter = 0;

  constructor(locks: LockManager, name: string, events: ElectionEvents, heartbeat?: LockHeartbeat) {
    this.#locks = locks;
    this.#name = name;
    this.#events = events;
    if (heartbeat) {
      this.#beat = {
        id: heartbeat.id,
        visible: heartbeat.visible,
        beatMs: heartbeat.beatMs ?? 500,
        silenceMs: heartbeat.silenceMs ?? 2_500,
        hiddenSilenceMs: heartbeat.hiddenSilenceMs ?? 70_000,
        jitterMs: heartbeat.jitterMs ?? 1_000,
        now: heartbeat.now ?? Date.now,
        random: heartbeat.random ?? Math.random,
      };
      this.#channel = new BroadcastChannel(heartbeat.channel);
      this.#channel.onmessage = (event: MessageEvent<unknown>) => {
        if (isBeat(event.data) && event.data.from !== this.#beat?.id) {
          this.#leaderVisible = event.data.visible;
          this.heard();
        }
      };
    }
  }

  get leading(): boolean {
    return this.#held !== undefined;
  }

  stand(): void {
    if (this.#standing) return;
    this.#standing = true;
    this.heard(); // A tab that joins gives the leader a full silence to be heard.
    this.#startBeats();
    this.#request(false);
  }

  withdraw(): void {
    this.#standing = false;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#giveUpQueued();
    this.#release?.();
  }

  /** The leader was heard (a beat, or an answer or status it handed on). */
  heard(): void {
    const beat = this.#beat;
    if (!beat) return;
    this.#heardAt = beat.now();
    this.#jitter = beat.random() * beat.jitterMs;
  }

  /** The leader's visibility changed: the followers hear it before its timers slow down. */
  announce(): void {
    if (this.leading) this.#sendBeat();
  }

  #startBeats(): void {
    const beat = this.#beat;
    if (!beat || this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.#tick(), beat.beatMs);
  }

  #tick(): void {
    const beat = this.#beat;
    if (!beat || !this.#standing) return;
    if (this.leading) {
      this.#sendBeat();
      return;
    }
    const silence = this.#leaderVisible ? beat.silenceMs : beat.hiddenSilenceMs;
    if (beat.now() - this.#heardAt <= silence + this.#jitter) return;
    // The holder is silent: hung, or frozen without a word. Take the lock from it.
    this.heard();
    this.#giveUpQueued();
    this.#request(true);
  }

  #sendBeat(): void {
    const beat = this.#beat;
    if (!beat) return;
    this.#channel?.postMessage({ kind: 'beat', from: beat.id, visible: beat.visible() });
  }

  seize(): void {
    this.#standing = true;
    if (this.leading) return;
    this.#giveUpQueued();
    this.#request(true);
  }

  close(): void {
    this.withdraw();
    this.#channel?.close();
    this.#channel = undefined;
  }

  #giveUpQueued(): void {
    this.#ticket += 1;
    this.#queued?.abort();
    this.#queued = undefined;
  }

  #request(steal: boolean): void {
    this.#ticket += 1;
    const ticket = this.#ticket;
    // A steal cannot be aborted (the API refuses `signal` with `steal`): it is granted at once.
    const queued = steal ? undefined : new AbortController();
    this.#queued = queued;
    const options: LockOptions = queued ? { signal: queued.signal } : { steal: true };
    const ended = () => {
      if (this.#held !== ticket) return;
      this.#held = undefined;
      this.#release = undefined;
      // The tab that took the lock beats from now on: give it a full silence to be heard.
      this.heard();
      this.#events.onDeposed();
      if (this.#standing) this.#request(false);
    };
    this.#locks
      .request(this.#name, options, () => {
        if (ticket !== this.#ticket) return undefined; // Given up meanwhile: release at once.
        this.#queued = undefined;
        this.#held = ticket;
        return new Promise<void>((resolve) => {
          this.#release = resolve;
          this.#sendBeat();
          this.#events.onElected();
        });
      })
      .then(ended, ended);
  }
}
