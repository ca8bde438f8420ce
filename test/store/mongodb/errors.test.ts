/**
 * The MongoDB store's error classification, on the driver's real error
 * classes (mongodb 7.9), constructed here as the driver constructs them.
 * Classes the driver does not export (the pool's errors, the topology
 * description) come from its own modules. mongodb-wire.test.ts checks the
 * same errors as the driver raises them from a server's replies.
 */
import { createRequire } from 'node:module';
import {
  MongoClientClosedError,
  type MongoError,
  MongoInvalidArgumentError,
  MongoNetworkError,
  MongoNetworkTimeoutError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoParseError,
  MongoServerClosedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
  MongoWriteConcernError,
} from 'mongodb';
import { describe, expect, it } from 'vitest';
import {
  duplicateKeyIndex,
  isIndexOptionNotImplemented,
  isUnavailable,
  UNAVAILABLE_CODES,
} from '../../../server/store/mongodb/errors.ts';

const require = createRequire(import.meta.url);
type ErrorClass<A extends unknown[]> = new (...args: A) => MongoError;
const pool = require('mongodb/lib/cmap/errors.js') as {
  WaitQueueTimeoutError: ErrorClass<[string, string]>;
  PoolClearedError: ErrorClass<[{ address: string }]>;
  PoolClosedError: ErrorClass<[{ address: string }]>;
};
const { TopologyDescription } = require('mongodb/lib/sdam/topology_description.js') as {
  TopologyDescription: new (type: string) => never;
};

const serverError = (code: number, codeName: string, errmsg = codeName) =>
  new MongoServerError({ code, codeName, errmsg, ok: 0 });

describe('MongoDB error classification', () => {
  describe('when the driver cannot reach or use a server', () => {
    const cases: [string, Error][] = [
      [
        'no server selected in time',
        new MongoServerSelectionError(
          'Server selection timed out after 1000 ms',
          new TopologyDescription('Unknown'),
        ),
      ],
      ['a reset connection', new MongoNetworkError('connection 3 to 10.0.0.5:27017 closed')],
      ['a socket timeout', new MongoNetworkTimeoutError('connection 3 timed out')],
      [
        'a pool checkout timeout',
        new pool.WaitQueueTimeoutError(
          'Timed out while checking out a connection from connection pool',
          '10.0.0.5:27017',
        ),
      ],
      ['a cleared pool', new pool.PoolClearedError({ address: '10.0.0.5:27017' })],
      ['a closed pool', new pool.PoolClosedError({ address: '10.0.0.5:27017' })],
      ['a client closed during shutdown', new MongoClientClosedError()],
      ['a closed topology', new MongoTopologyClosedError()],
      ['a client never connected', new MongoNotConnectedError('Client must be connected')],
      ['a closed server', new MongoServerClosedError()],
      [
        'an operation timeout',
        new MongoOperationTimeoutError('Timed out during connection checkout'),
      ],
    ];
    for (const [what, error] of cases) {
      it(`counts ${what} (${error.name}) as unavailable`, () => {
        expect(isUnavailable(error)).toBe(true);
      });
    }
  });

  describe('when the server answers that it cannot serve now', () => {
    const cases: [number, string][] = [
      [91, 'ShutdownInProgress'],
      [11600, 'InterruptedAtShutdown'],
      [11602, 'InterruptedDueToReplStateChange'],
      [189, 'PrimarySteppedDown'],
      [10107, 'NotWritablePrimary'],
      [13435, 'NotPrimaryNoSecondaryOk'],
      [13436, 'NotPrimaryOrSecondary'],
      [10058, 'LegacyNotPrimary'],
      [50, 'MaxTimeMSExpired'],
      [134, 'ReadConcernMajorityNotAvailableYet'],
    ];
    for (const [code, codeName] of cases) {
      it(`counts ${codeName} (${code}) without a retry label as unavailable`, () => {
        const error = serverError(code, codeName);
        expect(error.hasErrorLabel('RetryableWriteError')).toBe(false);
        expect(isUnavailable(error)).toBe(true);
        expect(UNAVAILABLE_CODES.get(code)).toBe(codeName);
      });
    }

    it('counts a majority that did not confirm a write in time as unavailable', () => {
      const error = new MongoWriteConcernError({
        writeConcernError: {
          code: 64,
          codeName: 'WriteConcernFailed',
          errmsg: 'waiting for replication timed out',
          errInfo: { wtimeout: true },
        },
        ok: 1,
      } as never);
      expect(isUnavailable(error)).toBe(true);
    });

    it('counts any error the server labels retryable as unavailable', () => {
      const error = new MongoServerError({
        code: 999,
        errmsg: 'something new',
        errorLabels: ['RetryableWriteError'],
      });
      expect(isUnavailable(error)).toBe(true);
    });

    it('follows the cause: a checkout timeout wrapped in an operation error', () => {
      const cause = new pool.WaitQueueTimeoutError('Timed out', '10.0.0.5:27017');
      const wrapped = new Error('append failed', { cause });
      expect(isUnavailable(wrapped)).toBe(true);
    });
  });

  describe('when the error is a bug or bad input, not an outage', () => {
    const cases: [string, unknown][] = [
      ['a duplicate key', serverError(11000, 'DuplicateKey', 'E11000 duplicate key error')],
      ['a bad value', serverError(2, 'BadValue')],
      ['a refused login', serverError(18, 'AuthenticationFailed')],
      ['a missing permission', serverError(13, 'Unauthorized')],
      ['a bad URL', new MongoParseError('Invalid scheme')],
      ['a bad argument', new MongoInvalidArgumentError('bad option')],
      ['a TypeError', new TypeError('x is undefined')],
      ['a string', 'not an error'],
      ['undefined', undefined],
    ];
    for (const [what, error] of cases) {
      it(`does not count ${what} as unavailable`, () => {
        expect(isUnavailable(error)).toBe(false);
      });
    }
  });
});

describe('duplicate-key errors', () => {
  it('names the index from the key pattern the server reports', () => {
    const dup = (keyPattern: object) =>
      new MongoServerError({ code: 11000, errmsg: 'E11000', keyPattern, keyValue: {} });
    expect(duplicateKeyIndex(dup({ room: 1, id: 1 }))).toBe('room_id');
    expect(duplicateKeyIndex(dup({ room: 1, key: 1 }))).toBe('room_key');
    expect(duplicateKeyIndex(dup({ _id: 1 }))).toBe('_id');
  });

  it('falls back to the index named in the message', () => {
    const error = new MongoServerError({
      code: 11000,
      errmsg:
        'E11000 duplicate key error collection: chat.chat_messages index: room_key dup key: { room: "main", key: "k" }',
    });
    expect(duplicateKeyIndex(error)).toBe('room_key');
  });

  it('is unknown when the error names no index (FerretDB 1.24, as its server answers)', () => {
    const error = new MongoServerError({
      code: 11000,
      errmsg: 'E11000 duplicate key error collection: chat_test.chat_messages',
    });
    expect(duplicateKeyIndex(error)).toBe('unknown');
  });

  it('is undefined for any other error', () => {
    expect(duplicateKeyIndex(serverError(2, 'BadValue'))).toBeUndefined();
    expect(duplicateKeyIndex(new MongoNetworkError('reset'))).toBeUndefined();
  });
});

describe('an index option the server does not implement', () => {
  it("is FerretDB's NotImplemented (238) naming that option", () => {
    const refused = serverError(
      238,
      'NotImplemented',
      'Index option "partialFilterExpression" is not implemented yet',
    );
    expect(isIndexOptionNotImplemented(refused, 'partialFilterExpression')).toBe(true);
    expect(isIndexOptionNotImplemented(refused, 'collation')).toBe(false);
    expect(isIndexOptionNotImplemented(serverError(2, 'BadValue'), 'partialFilterExpression')).toBe(
      false,
    );
  });
});
