/**
 * The MongoDB contract fixture's URL handling (mongodb-fixture.ts), checked
 * against the driver's parser: the URL given to child processes names the
 * test database and checks credentials where `MONGODB_URL` did, for seed
 * lists and credentials that `new URL()` would refuse or misread.
 */
import { MongoClient } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { withDatabase } from './fixture.ts';

const read = (url: string) => {
  const { dbName, credentials, hosts, replicaSet } = new MongoClient(url).options;
  return {
    dbName,
    source: credentials?.source,
    username: credentials?.username,
    password: credentials?.password,
    hosts: hosts.map(String),
    replicaSet,
  };
};

describe('withDatabase (the URL handed to child processes)', () => {
  const urls = [
    'mongodb://127.0.0.1:27017',
    'mongodb://127.0.0.1:27017/',
    'mongodb://a.example.com:27017,b.example.com:27018/?replicaSet=rs0',
    'mongodb://root:p%40ss%2Fw%3Ard@127.0.0.1:27017/?authSource=admin&directConnection=true',
    'mongodb://chat:pw@a.example.com,b.example.com/chat?replicaSet=rs0',
    'mongodb://chat:pw@db.example.com:27017',
    'mongodb://chat:pw@db.example.com:27017/chat?authsource=other',
  ];
  for (const url of urls) {
    it(`names the test database and keeps everything else of ${url.replace(/:[^:@/]+@/, ':***@')}`, () => {
      const before = read(url);
      const after = read(withDatabase(url, 'chat_test_x_1'));
      expect(after).toEqual({ ...before, dbName: 'chat_test_x_1' });
    });
  }

  it('pins authSource where the path used to decide it', () => {
    expect(withDatabase('mongodb://chat:pw@db:27017/chat', 'chat_test_x_1')).toBe(
      'mongodb://chat:pw@db:27017/chat_test_x_1?authSource=chat',
    );
  });
});
