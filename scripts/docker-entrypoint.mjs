/**
 * The Docker image's command: puts `DATABASE_PASSWORD` into `DATABASE_URL`,
 * percent-encoded, then runs the chat (`dist/server/main.js`) in this process.
 *
 * Why: docker-compose can only paste a password into a URL as it is, and a
 * password with `@`, `:`, `/`, `%` or `#` then breaks the URL (or silently
 * connects as someone else). With this, the compose file passes the URL
 * without a password and the password on its own:
 *
 *   DATABASE_URL=mysql://chat@mariadb:3306/chat
 *   DATABASE_PASSWORD=p@ss/w:rd%
 *   → DATABASE_URL=mysql://chat:p%40ss%2Fw%3Ard%25@mariadb:3306/chat
 *
 * mysql2 and the MongoDB driver both percent-decode the password of the URL.
 * Without `DATABASE_PASSWORD`, or with a URL that has no host (`sqlite:`,
 * `memory:`), the URL is left as it is. Only the image uses this file:
 * `server/core/config.ts` stays the one reader of the chat's settings.
 */

/** `scheme://user[:old]@rest` → `scheme://user:<encoded>@rest`. */
function withPassword(url, password) {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return url;
  const userinfo = /^([a-z][a-z0-9+.-]*:\/\/)([^@/?#]+)@/i.exec(url);
  if (!userinfo) {
    throw new Error('DATABASE_URL names no user (scheme://user@host/…) to give the password to');
  }
  const user = userinfo[2].split(':')[0];
  return `${userinfo[1]}${user}:${encodeURIComponent(password)}@${url.slice(userinfo[0].length)}`;
}

const { DATABASE_URL: url, DATABASE_PASSWORD: password } = process.env;
if (url && password) {
  try {
    process.env.DATABASE_URL = withPassword(url, password);
  } catch (error) {
    process.stderr.write(`Cannot start the chat: ${error.message}\n`);
    process.exit(1);
  }
}
await import('../dist/server/main.js');
