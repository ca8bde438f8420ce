/**
 * Suites that need a real server (MariaDB, Redis, MongoDB) read its URL from
 * the environment. Locally a missing URL skips them; in CI (`CI=true`, which
 * `.ci/run` runs under) MySQL, Redis and MongoDB (FerretDB, from
 * scripts/services.sh) are required, so a missing URL fails the run instead
 * of passing it silently.
 */
export const ciRequired = new Set(['MYSQL_URL', 'REDIS_URL', 'MONGODB_URL']);

/** The URL, or undefined when the suite may be skipped here. Throws when CI requires it. */
export function serviceUrl(name: 'MYSQL_URL' | 'REDIS_URL' | 'MONGODB_URL'): string | undefined {
  const url = process.env[name]?.trim() || undefined;
  if (url === undefined && process.env.CI && ciRequired.has(name)) {
    throw new Error(`${name} must be set in CI: .ci/run starts the server and sets it`);
  }
  return url;
}
