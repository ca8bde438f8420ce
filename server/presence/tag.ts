/**
 * A client's tag in a room: what the answers name a typist by, in place of
 * its `client` id (protocol.ts, `Typist.tag`).
 *
 * A client id is a browser's stable secret: with it a stranger could poll
 * or type as that browser. So no answer carries one; a typist is told
 * apart by an HMAC of the room and the client id under a key only the
 * servers hold. It is opaque (nothing about the id can be learnt from it,
 * and nobody without the key can make the tag of an id they guessed), it
 * differs per room (tags from two rooms cannot be matched up), and it is
 * the same on every process that holds the same key: `PRESENCE_TAG_SECRET`
 * (config.ts), which the cluster primary fills in for its workers when it
 * is unset, and which servers on several machines must share.
 */
import { createHmac, randomBytes } from 'node:crypto';

/** Base64url characters of a tag: 128 bits, short enough for a small typing part. */
const TAG_LENGTH = 22;

export type TagOf = (room: string, client: string) => string;

/** Tags under `secret`; a random key of this process's own when it is undefined. */
export function tagger(secret: string | undefined): TagOf {
  const key = secret === undefined || secret === '' ? randomBytes(32) : Buffer.from(secret, 'utf8');
  return (room, client) =>
    createHmac('sha256', key)
      .update(room)
      .update('\0')
      .update(client)
      .digest('base64url')
      .slice(0, TAG_LENGTH);
}

/** A secret for the workers of one primary, made once when none is configured. */
export function newTagSecret(): string {
  return randomBytes(32).toString('base64url');
}
