/**
 * The chat's MongoDB client: the driver settings that the store's timing
 * arithmetic (mongodb-timing.ts) counts on. The entry point owns the URL
 * (`open-store.ts`); the store is handed the client.
 *
 * These options override the same ones in the URL: the arithmetic holds only
 * with them. Everything else in the URL (hosts, credentials, `authSource`,
 * `replicaSet`, TLS, pool size) is the deployment's to choose.
 */
import { MongoClient, type MongoClientOptions } from 'mongodb';
import { defaultTiming, type MongoTiming } from './timing.ts';
import { mongoDatabaseName } from './url.ts';

/** Driver options for the chat, from its timing. */
export function chatClientOptions(timing: MongoTiming = defaultTiming): MongoClientOptions {
  return {
    serverSelectionTimeoutMS: timing.serverSelectionTimeoutMS,
    waitQueueTimeoutMS: timing.waitQueueTimeoutMS,
    connectTimeoutMS: timing.connectTimeoutMS,
    socketTimeoutMS: timing.socketTimeoutMS,
    // One attempt per write: a retried insert could land after its grace
    // (mongodb-timing.ts). A failed send answers 503 and the client retries
    // it with its idempotency key instead. Reads are retried once.
    retryWrites: false,
    retryReads: true,
    maxPoolSize: 50,
  };
}

/**
 * A client for `url`, which must name its database (`mongodb://host/chat`):
 * without one the driver would silently use `test`.
 */
export function createMongoClient(url: string, options: MongoClientOptions = {}): MongoClient {
  mongoDatabaseName(url);
  return new MongoClient(url, { ...chatClientOptions(), ...options });
}
