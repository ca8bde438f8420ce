/**
 * A fair list and the per-address presence cap across two processes on
 * Redis, and across the workers of one cluster: one address floods both with client ids whose names sort first;
 * the shared count holds it to `PRESENCE_CLIENTS_PER_ADDRESS` in all (not
 * that per process), and the list names at most `PEOPLE_LISTED_PER_ADDRESS`
 * of them, so the real people (other addresses) stay listed.
 */
import { describe, expect, it } from 'vitest';
import type { RecvAnswer } from '../../protocol/protocol.ts';
import { fromAddress } from '../helpers/from-address.ts';
import { describeWith, needs } from '../helpers/needs.ts';
import { useChatProcesses } from './fixture.ts';

const CAP = 10;

describeWith(needs.service('REDIS_URL'), 'a fair list with two processes on Redis', () => {
  const chat = useChatProcesses({
    processes: 2,
    redis: 'shared',
    env: { PRESENCE_CLIENTS_PER_ADDRESS: String(CAP), PRESENCE_CHANGE_MS: '0' },
  });

  describe('when one address floods both processes with client ids', () => {
    it('counts at most the cap of them in all, and lists 3, leaving the real people listed', async () => {
      const [a, b] = chat.servers as [(typeof chat.servers)[0], (typeof chat.servers)[0]];
      const room = `fair-${Date.now()}`;
      const flood = [fromAddress(a.url, '127.0.0.5'), fromAddress(b.url, '127.0.0.5')];
      const real = ['Ann', 'Bob', 'Cy'].map((name, i) => ({
        name,
        from: fromAddress((i % 2 === 0 ? a : b).url, `127.0.0.${i + 2}`),
      }));
      const reader = fromAddress(b.url, '127.0.0.9');
      try {
        for (const { name, from } of real) {
          const query = `room=${room}&since=0&client=client-${name}-real&nickname=${name}`;
          expect((await from('GET', `/recv?${query}`)).status).toBe(200);
        }
        for (const [side, from] of flood.entries()) {
          for (let i = 0; i < CAP; i += 1) {
            const nickname = encodeURIComponent(`!${side}${String(i).padStart(4, '0')} Alice`);
            const query = `room=${room}&since=0&client=client-flood-${side}-${i}&nickname=${nickname}`;
            expect((await from('GET', `/recv?${query}`)).status).toBe(200);
          }
        }
        // The shared view has everyone once a sync or two has passed.
        let seen: RecvAnswer | undefined;
        await expect
          .poll(
            async () => {
              const query = `room=${room}&since=0&client=client-zed-real&nickname=Zed&people=0`;
              seen = JSON.parse((await reader('GET', `/recv?${query}`)).body) as RecvAnswer;
              return seen.people?.names.filter((name) => !name.endsWith('Alice'));
            },
            { timeout: 10_000, interval: 200 },
          )
          .toEqual(['Ann', 'Bob', 'Cy', 'Zed']);
        expect(seen?.people?.names.filter((name) => name.endsWith('Alice'))).toHaveLength(3);
        // The cap's worth of the flood, the 3 real people and the reader.
        expect(seen?.online).toBe(CAP + 4);
      } finally {
        for (const from of [...flood, reader, ...real.map(({ from }) => from)]) from.close();
      }
    }, 40_000);
  });
});

describe('a fair list across the workers of one cluster', () => {
  const chat = useChatProcesses({
    workers: 2,
    env: { PRESENCE_CLIENTS_PER_ADDRESS: String(CAP), PRESENCE_CHANGE_MS: '0' },
  });

  it('counts at most the cap of one address in all, and lists 3, leaving the real people listed', async () => {
    const server = chat.servers[0]!;
    const room = `fair-${Date.now()}`;
    // Connections of their own: the primary hands them to the workers in turn.
    const flood = Array.from({ length: 4 }, () => fromAddress(server.url, '127.0.0.5'));
    const real = ['Ann', 'Bob', 'Cy'].map((name, i) => ({
      name,
      from: fromAddress(server.url, `127.0.0.${i + 2}`),
    }));
    const reader = fromAddress(server.url, '127.0.0.9');
    try {
      // A message in the room: a poll at 0 is answered at once, even one the cap leaves uncounted.
      await chat.clients[0]!.send({ room, text: 'hello' });
      for (const { name, from } of real) {
        const query = `room=${room}&since=0&client=client-${name}-real&nickname=${name}`;
        expect((await from('GET', `/recv?${query}`)).status).toBe(200);
      }
      for (const [side, from] of flood.entries()) {
        for (let i = 0; i < CAP; i += 1) {
          const nickname = encodeURIComponent(`!${side}${String(i).padStart(4, '0')} Alice`);
          const query = `room=${room}&since=0&client=client-flood-${side}-${i}&nickname=${nickname}`;
          expect((await from('GET', `/recv?${query}`)).status).toBe(200);
        }
      }
      let seen: RecvAnswer | undefined;
      await expect
        .poll(
          async () => {
            const query = `room=${room}&since=0&client=client-zed-real&nickname=Zed&people=0`;
            seen = JSON.parse((await reader('GET', `/recv?${query}`)).body) as RecvAnswer;
            return [seen.online, seen.people?.names.filter((name) => !name.endsWith('Alice'))];
          },
          { timeout: 10_000, interval: 200 },
        )
        .toEqual([CAP + 4, ['Ann', 'Bob', 'Cy', 'Zed']]);
      expect(seen?.people?.names.filter((name) => name.endsWith('Alice'))).toHaveLength(3);
    } finally {
      for (const from of [...flood, reader, ...real.map(({ from }) => from)]) from.close();
    }
  }, 40_000);
});
