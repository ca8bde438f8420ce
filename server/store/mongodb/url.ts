/**
 * The database a MongoDB connection string names.
 *
 * Without a path the driver silently uses the database `test`, and a user's
 * credentials are then checked against `admin`; with a path, that database
 * is also where credentials are looked up unless `authSource` says
 * otherwise. The chat therefore requires the path (`…/chat`) and the docs
 * say to add `?authSource=admin` for a user created in `admin`.
 *
 * Not `new URL()`: a connection string may list several hosts
 * (`mongodb://a:27017,b:27017/chat?replicaSet=rs0`), which WHATWG URL
 * parsing refuses. The MongoDB spec requires `/`, `?`, `@` and `:` inside
 * the user name and password to be percent-encoded, so the first `/` after
 * `://` ends the host list.
 */

export interface MongoUrlParts {
  /** `mongodb://` or `mongodb+srv://`. */
  scheme: string;
  /** Credentials and hosts: everything between the scheme and the path. */
  authority: string;
  /** The database (percent-decoded), or '' when the URL names none. */
  database: string;
  /** Everything from `?` on (options), or ''. */
  query: string;
}

export function splitMongoUrl(url: string): MongoUrlParts {
  const scheme = /^mongodb(\+srv)?:\/\//.exec(url)?.[0];
  if (!scheme) throw new Error(`Not a MongoDB URL: ${redact(url)}`);
  const rest = url.slice(scheme.length);
  const end = firstOf(rest, '/?');
  const authority = rest.slice(0, end);
  const afterHosts = rest.slice(end);
  const queryAt = afterHosts.indexOf('?');
  const path = queryAt < 0 ? afterHosts : afterHosts.slice(0, queryAt);
  const query = queryAt < 0 ? '' : afterHosts.slice(queryAt);
  return { scheme, authority, database: decodeURIComponent(path.replace(/^\//, '')), query };
}

/** The database `url` names; throws a message saying what to write when it names none. */
export function mongoDatabaseName(url: string): string {
  const { database } = splitMongoUrl(url);
  if (database === '') {
    throw new Error(
      `DATABASE_URL must name the database, e.g. mongodb://host:27017/chat (got ${redact(url)}). ` +
        'Without one the driver would use "test". For a user created in the admin database, add ' +
        '?authSource=admin (mongodb://chat:PASSWORD@host:27017/chat?authSource=admin).',
    );
  }
  return database;
}

/** The URL with its password replaced by `***`, for messages and logs. */
export function redact(url: string): string {
  return url.replace(/^([a-z+]+:\/\/[^:@/]*):[^@/]*@/i, '$1:***@');
}

function firstOf(text: string, chars: string): number {
  for (let i = 0; i < text.length; i++) if (chars.includes(text[i]!)) return i;
  return text.length;
}
