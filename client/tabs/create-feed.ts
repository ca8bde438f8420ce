/**
 * The feed this browser can give the page: shared by its tabs through Web
 * Locks where they exist (secure contexts), through BroadcastChannel
 * heartbeats where they do not (plain HTTP on a LAN address or a host name),
 * and the tab's own poll where BroadcastChannel is missing too.
 */
import { randomId } from '../ids.ts';
import { ChannelElection } from './channel-election.ts';
import type { ElectionFactory } from './election.ts';
import { type Feed, type FeedOptions, SharedFeed, SoloFeed } from './feed.ts';
import { LockElection } from './lock-election.ts';
import { browserPageLife } from './page-life.ts';

export type FeedKind = 'locks' | 'channel' | 'solo';

/** How this browser's tabs can share a poll. */
export function feedKind(): FeedKind {
  if (typeof BroadcastChannel !== 'function') return 'solo';
  // Typed as always there; missing outside secure contexts (and where a page removed it).
  const locks = (navigator as { locks?: LockManager }).locks;
  return typeof locks?.request === 'function' ? 'locks' : 'channel';
}

export function createFeed(options: FeedOptions, kind: FeedKind = feedKind()): Feed {
  if (kind === 'solo') return new SoloFeed(options);
  const page = browserPageLife();
  const id = randomId();
  const election: ElectionFactory =
    kind === 'locks'
      ? (name, events) =>
          new LockElection(navigator.locks, name, events, {
            id,
            visible: page.visible,
            channel: `${name}:beat`,
          })
      : (name, events) =>
          new ChannelElection(`${name}:election`, events, { id, visible: page.visible });
  return new SharedFeed({ ...options, election, page, id });
}
