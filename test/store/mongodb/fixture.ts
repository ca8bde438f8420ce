/**
 * The contract suite's fixture for a real MongoDB server (`MONGODB_URL`):
 * a fresh database per run, dropped at the end.
 *
 * In this process, handles reach their database by name
 * (`client.db(name)`), so `MONGODB_URL` is used as given: it may list
 * several hosts, carry credentials, and name no database. Child processes
 * open the store from a `DATABASE_URL`, which must name the database; for
 * them `withDatabase` puts the name in the URL's path, and pins
 * `authSource` to where the driver checked the credentials before, so the
 * new, random database never becomes the place credentials are looked up.
 */
import { MongoClient } from 'mongodb';
import { chatClientOptions } from '../../../server/store/mongodb/client.ts';
import { MongoStore } from '../../../server/store/mongodb/store.ts';
import { splitMongoUrl } from '../../../server/store/mongodb/url.ts';
import type { StoreFixture } from '../contract.ts';

/** `url` naming database `name`, credentials still checked where they were. */
export function withDatabase(url: string, name: string): string {
  const { scheme, authority, query } = splitMongoUrl(url);
  // The driver's own reading of the URL: where it would check the credentials.
  const source = new MongoClient(url).options.credentials?.source;
  const named = [...new URLSearchParams(query).keys()].some(
    (k) => k.toLowerCase() === 'authsource',
  );
  let options = query;
  if (source !== undefined && !named) {
    options += `${options ? '&' : '?'}authSource=${encodeURIComponent(source)}`;
  }
  return `${scheme}${authority}/${encodeURIComponent(name)}${options}`;
}

/** A random database name for this run: `chat_test_<random>`. */
export function runName(): string {
  return `chat_test_${Math.random().toString(36).slice(2, 10)}`;
}

export function mongoFixture(serverUrl: string): () => Promise<StoreFixture> {
  return async () => {
    const run = runName();
    const names: string[] = [];
    const database = () => {
      names.push(`${run}_${names.length + 1}`);
      return names[names.length - 1]!;
    };
    const name = database();
    return {
      open: async () =>
        new MongoStore(new MongoClient(serverUrl, chatClientOptions()), { dbName: name }),
      url: withDatabase(serverUrl, name),
      emptyDatabase: async () => withDatabase(serverUrl, database()),
      async teardown() {
        const client = new MongoClient(serverUrl, chatClientOptions());
        try {
          for (const each of names) await client.db(each).dropDatabase();
        } finally {
          await client.close();
        }
      },
    };
  };
}

/**
 * FerretDB's version when the server at `url` is FerretDB (its `buildInfo`
 * says so in `ferretdbVersion`), undefined for MongoDB. The suites use it to
 * skip what FerretDB cannot do, each with its line in docs/stores.md.
 */
export async function ferretdbVersion(url: string): Promise<string | undefined> {
  const client = new MongoClient(url, chatClientOptions());
  try {
    const info = await client.db('admin').command({ buildInfo: 1 });
    return typeof info.ferretdbVersion === 'string' ? info.ferretdbVersion : undefined;
  } finally {
    await client.close();
  }
}
