/**
 * The database a MongoDB URL names (server/store/mongodb/url.ts), checked
 * against the driver's own parser: for every URL the driver accepts, the
 * store must find the database the driver would use.
 */
import { MongoClient } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { createMongoClient } from '../../../server/store/mongodb/client.ts';
import { mongoDatabaseName, redact, splitMongoUrl } from '../../../server/store/mongodb/url.ts';

const named = [
  'mongodb://127.0.0.1:27017/chat',
  'mongodb://db.example.com/chat?authSource=admin',
  'mongodb://a.example.com:27017,b.example.com:27017,c.example.com:27017/chat?replicaSet=rs0',
  'mongodb://chat:s3cr%40t%2Fx%3A@a.example.com,b.example.com/chat?authSource=admin&replicaSet=rs0',
  'mongodb+srv://chat:pw@cluster0.example.mongodb.net/chat?retryWrites=true&w=majority',
  'mongodb://%2Ftmp%2Fmongodb-27017.sock/chat',
  'mongodb://[::1]:27017/chat',
  'mongodb://host/chat%2Dtest',
];

describe('mongoDatabaseName', () => {
  describe('when the URL names a database', () => {
    for (const url of named) {
      it(`finds the database the driver uses in ${redact(url)}`, () => {
        const driver = new MongoClient(url).options.dbName;
        expect(mongoDatabaseName(url)).toBe(driver);
        expect(driver).not.toBe('test');
      });
    }
  });

  describe('when the URL names none (the driver would use "test")', () => {
    const unnamed = [
      'mongodb://127.0.0.1:27017',
      'mongodb://127.0.0.1:27017/',
      'mongodb://a:27017,b:27017/?replicaSet=rs0',
      'mongodb://chat:topsecret@db.example.com:27017/?authSource=admin',
    ];
    for (const url of unnamed) {
      it(`refuses ${redact(url)}, saying what to write`, () => {
        expect(new MongoClient(url).options.dbName).toBe('test');
        expect(() => mongoDatabaseName(url)).toThrow(
          /DATABASE_URL must name the database, e\.g\. mongodb:\/\/host:27017\/chat .*authSource=admin/,
        );
      });
    }

    it('does not repeat the password in the message', () => {
      expect(() => mongoDatabaseName('mongodb://chat:topsecret@db:27017')).toThrow(
        /mongodb:\/\/chat:\*\*\*@db:27017/,
      );
      expect(() => mongoDatabaseName('mongodb://chat:topsecret@db:27017')).not.toThrow(/topsecret/);
    });

    it('keeps createMongoClient from building a client on it', () => {
      expect(() => createMongoClient('mongodb://127.0.0.1:27017')).toThrow(
        /must name the database/,
      );
    });
  });

  it('refuses what is not a MongoDB URL', () => {
    expect(() => mongoDatabaseName('mysql://root@127.0.0.1/chat')).toThrow(/Not a MongoDB URL/);
  });
});

describe('splitMongoUrl', () => {
  it('splits at the first "/" after the hosts, keeping the options', () => {
    expect(splitMongoUrl('mongodb://u:p@a:1,b:2/chat?replicaSet=rs0&authSource=admin')).toEqual({
      scheme: 'mongodb://',
      authority: 'u:p@a:1,b:2',
      database: 'chat',
      query: '?replicaSet=rs0&authSource=admin',
    });
  });
});

describe('authSource', () => {
  it('is the named database unless the URL says otherwise: hence ?authSource=admin', () => {
    const source = (url: string) => new MongoClient(url).options.credentials?.source;
    expect(source('mongodb://chat:pw@db:27017/chat')).toBe('chat');
    expect(source('mongodb://chat:pw@db:27017/chat?authSource=admin')).toBe('admin');
  });
});
