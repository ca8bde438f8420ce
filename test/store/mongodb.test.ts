import { describe, expect, it } from 'vitest';
import { createMongoClient, MongoStore } from '../../server/store/mongodb-store.ts';
import { StoreUnavailableError } from '../../server/store/store.ts';
import { serviceUrl } from '../helpers/env.ts';
import { closedPort } from './closed-port.ts';
import { describeStore } from './contract.ts';

const serverUrl = serviceUrl('MONGODB_URL');

describe('mongodb store with no server', () => {
  it('fails fast with StoreUnavailableError', async () => {
    const port = await closedPort();
    const store = new MongoStore(
      createMongoClient(`mongodb://127.0.0.1:${port}/chat`, { serverSelectionTimeoutMS: 300 }),
    );
    try {
      await expect(store.init()).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.append({ room: 'main', nickname: 'a', text: 'b' })).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
      await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await store.close();
    }
  });
});

if (serverUrl === undefined) {
  describe('mongodb store', () => {
    it.skip('needs MONGODB_URL (a real server, e.g. docker-compose)', () => {});
  });
} else {
  describeStore(
    'mongodb',
    async () => {
      // A database per run (and per "empty database"), dropped at the end.
      const run = `chat_test_${Math.random().toString(36).slice(2, 10)}`;
      const names: string[] = [];
      const urlOf = (name: string) => {
        const url = new URL(serverUrl);
        url.pathname = `/${name}`;
        return url.href;
      };
      const database = () => {
        names.push(`${run}_${names.length + 1}`);
        return urlOf(names[names.length - 1]!);
      };
      const url = database();
      return {
        open: async () => new MongoStore(createMongoClient(url)),
        url,
        emptyDatabase: async () => database(),
        async teardown() {
          const client = createMongoClient(serverUrl);
          try {
            for (const name of names) await client.db(name).dropDatabase();
          } finally {
            await client.close();
          }
        },
      };
    },
    { processes: true, keyRaceLeavesGap: true },
  );
}
