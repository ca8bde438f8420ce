/** What the HTTP layer is handed: the seams it calls, already built (`server.ts`). */
import type { Bus } from '../bus/bus.ts';
import type { Config } from '../config.ts';
import type { Log } from '../log.ts';
import type { MessageLog } from '../messages/message-log.ts';
import type { Presence } from '../presence/presence.ts';
import type { MessageStore } from '../store/store.ts';
import type { Telemetry } from '../telemetry.ts';
import type { Waiters } from './waiters.ts';

export interface ChatContext {
  config: Readonly<Config>;
  store: MessageStore;
  bus: Bus;
  /** What this process knows of each room's latest messages. */
  messages: MessageLog;
  /** The waiting polls. */
  waiters: Waiters;
  presence: Presence;
  log: Log;
  telemetry: Telemetry;
}
