/** What the HTTP layer is handed: the seams it calls, already built (`server.ts`). */
import type { ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';
import type { Bus } from '../bus/bus.ts';
import type { Config } from '../core/config.ts';
import type { Log } from '../core/log.ts';
import type { Hub } from '../hub/hub.ts';
import type { Telemetry } from '../metrics/telemetry.ts';
import type { Presence } from '../presence/presence.ts';
import type { MessageStore } from '../store/store.ts';

export interface ChatContext {
  config: Readonly<Config>;
  store: MessageStore;
  bus: Bus;
  /** Delivery: the message log, the waiting polls, the store watch (server/hub/). */
  hub: Hub<ServerResponse>;
  presence: Presence;
  log: Log;
  telemetry: Telemetry;
  /**
   * Set when a graceful shutdown has begun: `/ready` and `/health` answer
   * 503 `draining` from then on, while the chat still serves.
   */
  lifecycle: { draining: boolean };
  /** The bus's Redis connection (the publisher), when there is Redis: the send limit counts in it. */
  redis?: Redis | undefined;
}
