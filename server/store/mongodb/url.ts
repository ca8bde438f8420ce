/**
 * The database a MongoDB connection string names, read with the driver's
 * own parser (mongodb-connection-string-url, which the driver depends on):
 * the chat reads a URL exactly as the driver will, several hosts, SRV,
 * Unix sockets and percent-encoding included.
 *
 * Without a path the driver silently uses the database `test`, and a user's
 * credentials are then checked against `admin`; with a path, that database
 * is also where credentials are looked up unless `authSource` says
 * otherwise. The chat therefore requires the path (`…/chat`) and the docs
 * say to add `?authSource=admin` for a user created in `admin`.
 */
import { ConnectionString, redactConnectionString } from 'mongodb-connection-string-url';

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
  let parsed: ConnectionString;
  try {
    parsed = new ConnectionString(url);
  } catch (error) {
    throw new Error(`Not a MongoDB URL: ${redact(url)} (${(error as Error).message})`);
  }
  const credentials = parsed.username
    ? `${parsed.username}${parsed.password ? `:${parsed.password}` : ''}@`
    : '';
  return {
    scheme: `${parsed.protocol}//`,
    authority: credentials + parsed.hosts.join(','),
    database: decodeURIComponent(parsed.pathname.replace(/^\//, '')),
    query: parsed.search,
  };
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
  const redacted = redactConnectionString(url, {
    replacementString: '***',
    redactUsernames: false,
  });
  // What the parser cannot read it returns as it was: hide a password there too.
  return redacted === url ? url.replace(/^([a-z+]+:\/\/[^:@/]*):[^@/]*@/i, '$1:***@') : redacted;
}
