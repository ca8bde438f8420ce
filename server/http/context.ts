/** What the HTTP layer is handed: the seams it calls, already built. */
import type { Redis } from 'ioredis';
import type { Bus } from '../bus/bus.ts';
import type { Config } from '../config.ts';
import type { Hub } from '../hub/hub.ts';
import type { Presence } from '../hub/presence.ts';
import type { Log } from '../log.ts';
import type { MessageStore } from '../store/store.ts';

export interface ChatContext {
  config: Readonly<Config>;
  store: MessageStore;
  bus: Bus;
  hub: Hub;
  presence: Presence;
  log: Log;
  /** The bus's Redis connection (the publisher), when there is Redis: the send limit counts in it. */
  redis?: Redis | undefined;
}
