/**
 * The BroadcastChannel election, with Node's own BroadcastChannel between
 * elections of one process standing for tabs, on short timings. Each test
 * waits on the election's events, never on a clock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ChannelElection, type ChannelElectionOptions } from './channel-election.ts';

let names = 0;
const open: ChannelElection[] = [];
const extras: BroadcastChannel[] = [];

afterEach(() => {
  for (const election of open.splice(0)) election.close();
  for (const channel of extras.splice(0)) channel.close();
});

interface Tab {
  id: string;
  election: ChannelElection;
  elected: () => Promise<void>;
  deposed: () => Promise<void>;
  visible: boolean;
}

/** A tab of the room `name`, with promises for its next election and deposition. */
function tab(name: string, id: string, options: Partial<ChannelElectionOptions> = {}): Tab {
  let onElected: () => void = () => {};
  let onDeposed: () => void = () => {};
  const state: Tab = {
    id,
    visible: true,
    election: undefined as unknown as ChannelElection,
    elected: () => new Promise<void>((resolve) => (onElected = resolve)),
    deposed: () => new Promise<void>((resolve) => (onDeposed = resolve)),
  };
  state.election = new ChannelElection(
    name,
    { onElected: () => onElected(), onDeposed: () => onDeposed() },
    {
      id,
      visible: () => state.visible,
      beatMs: 10,
      silenceMs: 60,
      claimMs: 20,
      joinMs: 30,
      ...options,
    },
  );
  open.push(state.election);
  return state;
}

const room = () => `test-room-${++names}`;

describe('ChannelElection', () => {
  describe('when a tab stands alone', () => {
    it('should lead once it hears no beat', async () => {
      const only = tab(room(), 'a');
      const elected = only.elected();
      only.election.stand();
      await elected;
      expect(only.election.leading).toBe(true);
    });
  });

  describe('when several tabs stand', () => {
    it('should elect one, and another as soon as the leader withdraws', async () => {
      const name = room();
      const first = tab(name, 'a');
      const firstElected = first.elected();
      first.election.stand();
      await firstElected;
      const others = [tab(name, 'b'), tab(name, 'c')];
      // Long silences here: a takeover can only come from the leader saying it leaves.
      const next = Promise.race(
        others.map(async (other) => {
          await other.elected();
          return other;
        }),
      );
      for (const other of others) other.election.stand();
      // Both heard the leader's beat and follow it.
      await new Promise<void>((resolve) => {
        const probe = new BroadcastChannel(`${name}`);
        extras.push(probe);
        probe.onmessage = (event: MessageEvent<{ kind: string; from: string }>) => {
          if (event.data.kind === 'beat' && event.data.from === 'a') resolve();
        };
      });
      expect(others.map((other) => other.election.leading)).toEqual([false, false]);

      const deposed = first.deposed();
      first.election.withdraw();
      await deposed;
      const winner = await next;
      expect(first.election.leading).toBe(false);
      // A claim settles on rank: among visible tabs, the larger id.
      expect(winner.id).toBe('c');
    });
  });

  describe('when the leader stops beating without a word (a crash)', () => {
    it('should take over after the silence', async () => {
      const name = room();
      const dead = new BroadcastChannel(name);
      extras.push(dead);
      const follower = tab(name, 'b');
      const elected = follower.elected();
      follower.election.stand();
      dead.postMessage({ kind: 'beat', from: 'z', visible: true, since: 0 });
      await elected;
      expect(follower.election.leading).toBe(true);
    });
  });

  describe('when a visible tab seizes the lead from a hidden leader (a handover)', () => {
    it('should depose the hidden leader', async () => {
      const name = room();
      const hidden = tab(name, 'z');
      const elected = hidden.elected();
      hidden.election.stand();
      await elected;
      hidden.visible = false;
      hidden.election.announce();

      const seen = tab(name, 'a');
      seen.election.stand();
      const deposed = hidden.deposed();
      seen.election.seize();
      await deposed;
      expect(seen.election.leading).toBe(true);
      expect(hidden.election.leading).toBe(false);
    });
  });

  describe('when two visible tabs both lead for a moment', () => {
    it('should keep the one that has led longer', async () => {
      const name = room();
      const incumbent = tab(name, 'a');
      const elected = incumbent.elected();
      incumbent.election.stand();
      await elected;
      // It outranks the incumbent by id; only its later start must lose.
      const newcomer = tab(name, 'z', { now: () => Date.now() + 1_000 });
      const deposed = newcomer.deposed();
      newcomer.election.seize(); // As a claim that came too soon would.
      await deposed;
      expect(incumbent.election.leading).toBe(true);
      expect(newcomer.election.leading).toBe(false);
    });
  });
});
