/**
 * Who is here: a room's list of nicknames as the `/recv` answer carries it
 * (protocol.ts, `People`), built from the nicknames of its clients.
 *
 * The list's `version` is a hash of what it says (the names listed and how
 * many more), not a counter: every process that sees the same room sees the
 * same version, so a client may poll any worker or machine and send its
 * version back, and the polls of a room that hold the current version share
 * one body without the names (docs/design.md, "Who is here and who types").
 * Two different lists with the same 32-bit hash would leave a client with
 * the older one until the next change: a chance of one in four billion per
 * change, for a hint that corrects itself.
 */
import { DEFAULT_NICKNAME, limits, type People } from '../../protocol/protocol.ts';

export { DEFAULT_NICKNAME };

/**
 * The list of `nicknames` (one per client, in any order) for a room where
 * `online` clients count: the first `maxListed` by sort order, and how many
 * more. `online` may exceed the nicknames known here (other processes'
 * clients whose names did not reach this one yet): they count in `more`.
 */
export function peopleOf(
  nicknames: Iterable<string>,
  online: number,
  maxListed = limits.maxPeopleListed,
): People {
  const sorted = [...nicknames].sort(compareNames);
  const names = sorted.slice(0, maxListed);
  const more = Math.max(0, online - names.length);
  return { version: versionOf(names, more), names, more };
}

/**
 * The nicknames of `entries` ([nickname, client address]) the list may
 * name: in list order, at most `perAddress` from one address (0: all). The
 * others are left for `more`: a flood of client ids from one address, with
 * names that sort first, shows a few of them and leaves room for everyone
 * else. An entry whose address is not known is not held by the cap.
 */
export function fairNames(
  entries: readonly (readonly [string, string | undefined])[],
  perAddress: number,
): string[] {
  if (perAddress === 0) return entries.map(([name]) => name);
  const sorted = [...entries].sort(([a], [b]) => compareNames(a, b));
  const shown = new Map<string, number>();
  const names: string[] = [];
  for (const [name, address] of sorted) {
    if (address !== undefined) {
      const count = shown.get(address) ?? 0;
      if (count >= perAddress) continue;
      shown.set(address, count + 1);
    }
    names.push(name);
  }
  return names;
}

/** Sort order of the list: by code unit, so every process sorts alike whatever its locale. */
function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** FNV-1a (32 bits) of the names and the count: the same list gives the same version anywhere. */
export function versionOf(names: readonly string[], more: number): number {
  let hash = 0x811c9dc5;
  const step = (code: number) => {
    hash ^= code;
    hash = Math.imul(hash, 0x01000193);
  };
  for (const name of names) {
    for (let i = 0; i < name.length; i += 1) step(name.charCodeAt(i));
    step(0);
  }
  for (const digit of String(more)) step(digit.charCodeAt(0));
  return hash >>> 0;
}
