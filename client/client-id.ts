/**
 * The browser's `client` id: what the server counts in a room's `online`.
 * One per browser, kept in `localStorage`, so eight tabs of one browser
 * count once, and a change of the tab that polls (`tabs/`) polls with the
 * same id: the count does not move. With storage blocked it is one per
 * page load, as before.
 */
import { CLIENT_PATTERN } from '../protocol/protocol.ts';
import { randomId } from './ids.ts';
import { loadItem, saveItem } from './storage.ts';

const CLIENT_KEY = 'chat.client';

/** The stored id, or a new one stored now. Read again on each call: another tab may have just stored one. */
export function browserClientId(load = loadItem, save = saveItem): string {
  const stored = load(CLIENT_KEY);
  if (stored !== undefined && CLIENT_PATTERN.test(stored)) return stored;
  const id = randomId();
  save(CLIENT_KEY, id);
  return id;
}
