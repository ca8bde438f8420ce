/**
 * The per-browser share of waiting polls (server/hub/client-share.ts), on
 * its own: what counts under which share, and that an ended poll frees its
 * place. The share over real HTTP, behind one address with a hostile
 * neighbour, is test/net/fair-shares.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ClientShare, type Shared } from '../../server/hub/client-share.ts';

interface Poll {
  address: string;
  /** What the presence cap marked, for a poll it served without its id. */
  uncounted?: string;
}

function poll(address: string, client?: string, uncounted?: string): Shared<Poll> {
  return { reply: { address, uncounted }, client, address: undefined };
}

function share(limit: number) {
  let reads = 0;
  const shares = new ClientShare<Poll>(
    limit,
    (reply) => {
      reads += 1;
      return reply.address;
    },
    (reply) => reply.uncounted,
  );
  return { shares, reads: () => reads };
}

describe('ClientShare', () => {
  it('holds each client id to its share, and frees a place when a poll ends', () => {
    const { shares, reads } = share(2);
    const [a1, a2, a3] = [
      poll('10.0.0.1', 'ann'),
      poll('10.0.0.1', 'ann'),
      poll('10.0.0.1', 'ann'),
    ];
    expect([shares.admit(a1), shares.admit(a2), shares.admit(a3)]).toEqual([true, true, false]);
    // Another browser behind the same address has a share of its own.
    expect(shares.admit(poll('10.0.0.1', 'bob'))).toBe(true);
    shares.remove(a1);
    expect(shares.admit(a3)).toBe(true);
    // A poll with an id is counted without reading its address.
    expect(reads()).toBe(0);
  });

  it('counts a poll served without its id under the address and id the cap marked', () => {
    const { shares } = share(1);
    // A stranger naming Ann's id from another address fills its own share, not Ann's.
    expect(shares.admit(poll('10.0.0.9', undefined, '10.0.0.9 ann'))).toBe(true);
    expect(shares.admit(poll('10.0.0.9', undefined, '10.0.0.9 ann'))).toBe(false);
    expect(shares.admit(poll('10.0.0.1', 'ann'))).toBe(true);
  });

  it('holds the polls without any id from one address to one share, apart from other addresses', () => {
    const { shares } = share(2);
    const first = poll('10.0.0.1');
    expect([shares.admit(first), shares.admit(poll('10.0.0.1'))]).toEqual([true, true]);
    expect(shares.admit(poll('10.0.0.1'))).toBe(false);
    expect(shares.admit(poll('10.0.0.2'))).toBe(true);
    shares.remove(first);
    expect(shares.admit(poll('10.0.0.1'))).toBe(true);
  });

  it('counts nothing with a share of 0', () => {
    const { shares, reads } = share(0);
    for (let i = 0; i < 100; i += 1) expect(shares.admit(poll('10.0.0.1'))).toBe(true);
    expect(reads()).toBe(0);
  });
});
