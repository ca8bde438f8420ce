/**
 * The bus across machines: Redis pub/sub on one channel
 * (`${REDIS_PREFIX}:messages`). Every server sharing the database and Redis
 * publishes its stored messages there and hands what the others publish to
 * its hub.
 *
 * Each process tags what it publishes with a random origin id and ignores
 * that id when the message comes back: Redis echoes a publish to every
 * subscriber, the sender included (a pid alone is not unique across machines).
 *
 * Redis may go away, or hang with its connections open. ioredis reconnects
 * both connections by itself, and the heartbeat (`redis-health.ts`) tells a
 * silent Redis from a live one; while either says down the bus is not live
 * and `publish` drops messages (logged once per outage, not per message)
 * instead of queueing them: the store watch of every process looks for them
 * in the store, and the hubs do not trust an empty ring when the bus is not
 * local, so their clients' next polls read the store and miss nothing. The
 * clients see no error.
 *
 * Ephemeral events (someone types) go on the same channel in their own
 * envelope (`e` instead of `m`); while Redis is down they are dropped
 * without a word: the messages' outage is logged already.
 *
 * The connections are handed in (the entry point owns the URL and closes
 * them): `new RedisBus(publisher, subscriber, { channel, health })`. The subscriber
 * connection is in subscriber mode and can do nothing else.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Log } from '../core/log.ts';
import type { Message } from '../store/store.ts';
import {
  type Bus,
  type BusEvent,
  type BusEventHandler,
  type BusHandler,
  isBusEvent,
} from './bus.ts';
import type { RedisHealth } from './redis-health.ts';

export interface RedisBusOptions {
  channel: string;
  /** The heartbeat of both connections: while it says down, the bus is not live. */
  health?: RedisHealth;
  log?: Log;
}

/** What travels on the channel. Short keys: it is sent once per message to every server. */
interface Envelope {
  /** Origin: the publishing bus. */
  o: string;
  /** The message, as stored. */
  m?: Message;
  /** Or an ephemeral event. */
  e?: BusEvent;
}

export class RedisBus implements Bus {
  readonly kind = 'redis';
  /** Pub/sub drops what is published while a subscriber reconnects (`Bus.reliable`). */
  readonly reliable = false;
  /** This process's id on the channel. */
  readonly origin = randomUUID();
  readonly #handlers: BusHandler[] = [];
  readonly #eventHandlers: BusEventHandler[] = [];
  readonly #channel: string;
  readonly #log: Log;
  readonly #health: RedisHealth | undefined;
  #subscribed = false;
  #everSubscribed = false;
  #publishDown = false;
  #closed = false;
  #firstSubscription: Promise<void>;
  #onFirstSubscription!: () => void;

  constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    options: RedisBusOptions,
  ) {
    this.#channel = options.channel;
    this.#log = options.log ?? (() => {});
    this.#health = options.health;
    this.#firstSubscription = new Promise((resolve) => {
      this.#onFirstSubscription = resolve;
    });
    subscriber.on('message', this.#onChannelMessage);
    // ioredis resubscribes by itself after a reconnect, but does not say when
    // that is done; subscribing again is harmless and tells us.
    subscriber.on('ready', this.#subscribe);
    subscriber.on('close', this.#onSubscriberClose);
    publisher.on('ready', this.#onPublisherReady);
    if (subscriber.status === 'ready') this.#subscribe();
  }

  /** Subscribed, able to publish, and Redis answers: what a test waits for after an outage. */
  get live(): boolean {
    return this.#subscribed && this.publisher.status === 'ready' && (this.#health?.up ?? true);
  }

  /**
   * Resolves once the first subscription is in place and the publisher is
   * connected (startup waits for it, bounded): before that, messages are
   * neither heard nor sent.
   */
  async ready(): Promise<void> {
    await this.#firstSubscription;
    // Not `events.once`: it would reject on the first connection error, and
    // ioredis keeps retrying after those.
    if (this.publisher.status !== 'ready') {
      await new Promise<void>((resolve) => this.publisher.once('ready', () => resolve()));
    }
  }

  publish(message: Message): void {
    if (this.#closed) return;
    // A silent Redis would queue every message in the connection until it
    // answers: drop them instead, as while it is down.
    if (!this.#canPublish()) {
      this.#onPublishFailed();
      return;
    }
    this.#onPublisherReady();
    const envelope: Envelope = { o: this.origin, m: message };
    this.publisher
      .publish(this.#channel, JSON.stringify(envelope))
      .catch((error: unknown) => this.#onPublishFailed(error));
  }

  onMessage(handler: BusHandler): void {
    this.#handlers.push(handler);
  }

  /** Dropped whenever a message would be (`#canPublish`): a late typing notice is a wrong one. */
  publishEvent(event: BusEvent): void {
    if (this.#closed || !this.#canPublish()) return;
    const envelope: Envelope = { o: this.origin, e: event };
    this.publisher.publish(this.#channel, JSON.stringify(envelope)).catch(() => {});
  }

  onEvent(handler: BusEventHandler): void {
    this.#eventHandlers.push(handler);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.subscriber.off('message', this.#onChannelMessage);
    this.subscriber.off('ready', this.#subscribe);
    this.subscriber.off('close', this.#onSubscriberClose);
    this.publisher.off('ready', this.#onPublisherReady);
    this.#handlers.length = 0;
    this.#eventHandlers.length = 0;
    if (this.subscriber.status === 'ready') {
      await this.subscriber.unsubscribe(this.#channel).catch(() => {});
    }
  }

  readonly #subscribe = (): void => {
    if (this.#closed) return;
    this.subscriber.subscribe(this.#channel).then(
      () => {
        if (this.#closed) return;
        if (this.#everSubscribed && !this.#subscribed) {
          this.#log('info', 'redis bus: subscribed again');
        }
        this.#subscribed = true;
        this.#everSubscribed = true;
        this.#onFirstSubscription();
      },
      (error: unknown) =>
        this.#log('warn', 'redis bus: cannot subscribe; retrying on reconnect', error),
    );
  };

  readonly #onSubscriberClose = (): void => {
    if (this.#subscribed) {
      this.#log(
        'warn',
        'redis bus: lost the subscription; other servers reach us through the store until it is back',
      );
    }
    this.#subscribed = false;
  };

  readonly #onPublisherReady = (): void => {
    if (!this.#publishDown || !this.#canPublish()) return;
    this.#publishDown = false;
    this.#log('info', 'redis bus: publishing again');
  };

  #canPublish(): boolean {
    return this.publisher.status === 'ready' && this.#health?.up !== false;
  }

  #onPublishFailed(error?: unknown): void {
    if (this.#publishDown) return;
    this.#publishDown = true;
    this.#log(
      'warn',
      'redis bus: cannot publish, Redis is unreachable; other servers catch up from the store until it is back',
      error,
    );
  }

  readonly #onChannelMessage = (channel: string, payload: string): void => {
    if (channel !== this.#channel) return;
    let envelope: Envelope;
    try {
      envelope = JSON.parse(payload) as Envelope;
    } catch {
      this.#log('warn', 'redis bus: ignored a payload that is not JSON');
      return;
    }
    if (envelope.o === this.origin) return;
    if (isMessage(envelope.m)) for (const handler of this.#handlers) handler(envelope.m);
    else if (isBusEvent(envelope.e)) for (const handler of this.#eventHandlers) handler(envelope.e);
  };
}

/** The channel is shared with whoever else can reach Redis: check the shape before the hub trusts it. */
function isMessage(value: unknown): value is Message {
  const m = value as Message;
  return (
    typeof m === 'object' &&
    m !== null &&
    Number.isSafeInteger(m.id) &&
    m.id > 0 &&
    typeof m.room === 'string' &&
    typeof m.nickname === 'string' &&
    typeof m.text === 'string' &&
    typeof m.time === 'string'
  );
}
