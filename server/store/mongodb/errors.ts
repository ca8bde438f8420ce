/**
 * Which MongoDB driver errors mean "the database cannot be used now" (the
 * store throws `StoreUnavailableError`, the client gets 503 and retries) and
 * which duplicate-key error came from which index.
 *
 * Errors are matched by class name (the whole prototype chain, so subclasses
 * count: `MongoNetworkTimeoutError` is a `MongoNetworkError`) and by server
 * code, not by `instanceof` alone: the pool's `MongoWaitQueueTimeoutError` is
 * not exported by the driver, and a second copy of the driver in
 * node_modules would defeat `instanceof`. The `cause` chain is followed: the
 * driver wraps some errors (a checkout timeout inside an operation timeout).
 */

/** Driver-side failures: no server, no connection, a closed client or pool. */
const UNAVAILABLE_CLASSES = new Set([
  'MongoServerSelectionError', // no usable server within serverSelectionTimeoutMS
  'MongoNetworkError', // includes MongoNetworkTimeoutError (socketTimeoutMS) and MongoPoolClearedError
  'MongoWaitQueueTimeoutError', // no pooled connection within waitQueueTimeoutMS
  'MongoPoolClosedError',
  'MongoTopologyClosedError',
  'MongoClientClosedError', // the client was closed under a running operation (shutdown)
  'MongoNotConnectedError',
  'MongoServerClosedError',
  'MongoOperationTimeoutError',
]);

/**
 * Server codes that mean "not now": the node is shutting down, stepping
 * down or not (or no longer) the primary, a time limit ran out, or a
 * majority did not confirm a write in time. Names as in the server's
 * error_codes.yml.
 */
export const UNAVAILABLE_CODES: ReadonlyMap<number, string> = new Map([
  [6, 'HostUnreachable'],
  [7, 'HostNotFound'],
  [50, 'MaxTimeMSExpired'],
  [64, 'WriteConcernFailed'], // WriteConcernTimeout from 8.1: w:'majority' not confirmed within wtimeout
  [89, 'NetworkTimeout'],
  [91, 'ShutdownInProgress'],
  [133, 'FailedToSatisfyReadPreference'],
  [134, 'ReadConcernMajorityNotAvailableYet'],
  [189, 'PrimarySteppedDown'],
  [262, 'ExceededTimeLimit'],
  [9001, 'SocketException'],
  [10058, 'LegacyNotPrimary'],
  [10107, 'NotWritablePrimary'],
  [11600, 'InterruptedAtShutdown'],
  [11602, 'InterruptedDueToReplStateChange'],
  [13435, 'NotPrimaryNoSecondaryOk'],
  [13436, 'NotPrimaryOrSecondary'],
]);

/** Labels the server or driver puts on errors worth retrying later. */
const UNAVAILABLE_LABELS = [
  'RetryableWriteError',
  'TransientTransactionError',
  'SystemOverloadedError',
];

export const DUPLICATE_KEY = 11000;
export const MAX_TIME_EXPIRED = 50;
export const NOT_IMPLEMENTED = 238;

interface ErrorLike {
  code?: unknown;
  cause?: unknown;
  hasErrorLabel?: (label: string) => boolean;
}

/** No server to talk to, or one that cannot serve now: a 503, not a 500. */
export function isUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; isObject(e) && depth < 5; e = (e as ErrorLike).cause, depth++) {
    if (classNames(e).some((name) => UNAVAILABLE_CLASSES.has(name))) return true;
    const { code, hasErrorLabel } = e as ErrorLike;
    if (typeof code === 'number' && UNAVAILABLE_CODES.has(code)) return true;
    if (
      typeof hasErrorLabel === 'function' &&
      UNAVAILABLE_LABELS.some((l) => hasErrorLabel.call(e, l))
    ) {
      return true;
    }
  }
  return false;
}

export function isMaxTimeExpired(error: unknown): boolean {
  return isObject(error) && (error as ErrorLike).code === MAX_TIME_EXPIRED;
}

/**
 * The index a duplicate-key error came from (`room_id`, `room_key`, `_id`),
 * or undefined when `error` is not one. The server names the index's key
 * pattern in `keyPattern` (4.4+); the message's "index: <name>" is the
 * fallback. `unknown` when the error names neither (FerretDB 1.x says only
 * "E11000 duplicate key error collection: db.coll"): the store then asks
 * the documents which one it was.
 */
export function duplicateKeyIndex(error: unknown): string | undefined {
  if (!isObject(error) || (error as ErrorLike).code !== DUPLICATE_KEY) return undefined;
  const { keyPattern, errmsg, message } = error as {
    keyPattern?: Record<string, unknown>;
    errmsg?: string;
    message?: string;
  };
  if (keyPattern) {
    const fields = Object.keys(keyPattern).join(',');
    if (fields === 'room,id') return 'room_id';
    if (fields === 'room,key') return 'room_key';
    if (fields === '_id') return '_id';
  }
  return /index: (\S+)/.exec(errmsg ?? message ?? '')?.[1] ?? 'unknown';
}

/** The server refused an index option it does not implement (FerretDB: `partialFilterExpression`). */
export function isIndexOptionNotImplemented(error: unknown, option: string): boolean {
  if (!isObject(error) || (error as ErrorLike).code !== NOT_IMPLEMENTED) return false;
  const { message } = error as { message?: unknown };
  return typeof message === 'string' && message.includes(option);
}

/** True when every write of a bulk insert failed only on a duplicate key (claims that lost: fine). */
export function onlyDuplicates(error: unknown): boolean {
  if (!isObject(error)) return false;
  const { writeErrors, code } = error as { writeErrors?: unknown; code?: unknown };
  const errors = Array.isArray(writeErrors) ? writeErrors : writeErrors ? [writeErrors] : [];
  if (errors.length === 0) return code === DUPLICATE_KEY;
  return errors.every((w) => isObject(w) && (w as ErrorLike).code === DUPLICATE_KEY);
}

function classNames(error: object): string[] {
  const names: string[] = [];
  for (
    let p = Object.getPrototypeOf(error);
    p && p !== Object.prototype;
    p = Object.getPrototypeOf(p)
  ) {
    if (typeof p.constructor?.name === 'string') names.push(p.constructor.name);
  }
  // The driver's classes also report their public name through `name` (a getter).
  const { name } = error as { name?: unknown };
  if (typeof name === 'string') names.push(name);
  return names;
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}
