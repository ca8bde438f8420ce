/**
 * Electing one tab per room to run the long poll for every tab of the
 * browser. Two ways, one interface:
 * - `lock-election.ts`: the Web Locks API. The browser grants the lock to
 *   one tab and frees it when that tab closes or crashes. Secure contexts
 *   only (HTTPS, or localhost).
 * - `channel-election.ts`: heartbeats over a BroadcastChannel, for plain
 *   HTTP on a LAN address or a host name, where `navigator.locks` is missing.
 */

export interface ElectionEvents {
  /** This tab leads now: it polls for the room. */
  onElected(): void;
  /** It no longer does (another tab took over, or it withdrew). */
  onDeposed(): void;
}

export interface Election {
  readonly leading: boolean;
  /** Stands for election; takes over when the leader goes. Nothing if already standing. */
  stand(): void;
  /** Gives up leading, or its place in line, until `stand` (the tab is frozen or leaving). */
  withdraw(): void;
  /** Takes over now from the leader, which is deposed (a handover to this tab). */
  seize(): void;
  /** The leader was heard from outside the election (it handed on an answer or its status): it lives. */
  heard?(): void;
  /** This tab's visibility changed (an election that ranks by it tells the others at once). */
  announce?(): void;
  /** Withdraws for good. */
  close(): void;
}

/** Builds an election for the room's lock or channel name, reporting to `events`. */
export type ElectionFactory = (name: string, events: ElectionEvents) => Election;
