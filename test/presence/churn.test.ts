import { afterEach, describe, expect, it } from 'vitest';
import type { RecvAnswer } from '../../protocol/protocol.ts';
import { LocalPresence } from '../../server/presence/presence.ts';
import { SteadyCount } from '../../server/presence/steady-count.ts';
import { startTestChat, type TestChat, until } from '../helpers/chat.ts';
import { ManualClock } from '../helpers/manual-clock.ts';
import { exchange, parseAnswers, portOf } from '../helpers/raw-http.ts';

let chat: TestChat | undefined;
afterEach(async () => {
  await chat?.close();
  chat = undefined;
});

/** One poll from `localAddress` (another 127.x address is another client address). */
async function poll(query: string, localAddress = '127.0.0.1'): Promise<RecvAnswer> {
  const result = await exchange(
    portOf(chat!.url),
    `GET /recv?${query} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
    { localAddress, timeoutMs: 10_000 },
  );
  const [answer] = parseAnswers(result.text);
  expect(answer?.status).toBe(200);
  return JSON.parse(answer!.body) as RecvAnswer;
}

/** Polls room r from one address with `count` new client ids; returns the highest online count seen. */
async function churn(count: number): Promise<number> {
  let highest = 0;
  for (let i = 0; i < count; i += 1) {
    // Every other one spells the name encoded, as the poll's parser reads it too.
    const name = i % 2 === 0 ? 'client' : 'cl%69ent';
    const answer = await poll(`room=r&since=0&${name}=churn-${String(i).padStart(6, '0')}`);
    highest = Math.max(highest, answer.online);
    // The churn's pace: a new id every notify period or so, so each can be seen.
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return highest;
}

/** A bystander polling room r from another address; `wakeUps` counts the answers it gets. */
function startBystander(): { wakeUps: number; stop(): void } {
  const state = { wakeUps: 0, stopped: false, stop: () => {} };
  state.stop = () => {
    state.stopped = true;
  };
  void (async () => {
    while (!state.stopped) {
      await poll('room=r&since=1&client=bystander-tab', '127.0.0.2');
      if (!state.stopped) state.wakeUps += 1;
    }
  })().catch(() => {});
  return state;
}

describe('presence churn', () => {
  describe('when one address polls with a new client id again and again', () => {
    it('counts at most PRESENCE_CLIENTS_PER_ADDRESS of them', async () => {
      chat = await startTestChat({
        pollTimeoutMs: 60_000,
        presenceClientsPerAddress: 5,
        presenceChangeMs: 0,
      });
      await chat.send({ room: 'r', text: 'so that polls from 0 catch up at once' });
      const highest = await churn(60);
      console.log(`presence churn: highest online count ${highest} (60 ids from one address)`);
      expect(highest).toBe(5);
      const metrics = await (await chat.get('/metrics')).text();
      expect(metrics).toMatch(/chat_presence_uncounted_total 55/);
    }, 30_000);

    it("wakes the room's waiting polls a bounded number of times", async () => {
      chat = await startTestChat({
        pollTimeoutMs: 60_000,
        presenceNotifyMs: 20,
        presenceChangeBurst: 2,
        presenceChangeMs: 60_000,
      });
      await chat.send({ room: 'r', text: 'so that polls from 0 catch up at once' });
      const bystander = startBystander();
      // Its first poll is answered at once (a new client id); the next one waits.
      await until(
        () => bystander.wakeUps === 1 && chat!.hub.waiting === 1,
        'the bystander to wait',
      );
      bystander.wakeUps = 0;
      await churn(60);
      bystander.stop();
      console.log(`presence churn: bystander woken ${bystander.wakeUps} times by 60 new ids`);
      expect(bystander.wakeUps).toBeLessThanOrEqual(2);
    }, 30_000);
  });
});

describe('SteadyCount', () => {
  it('shows `burst` changes at once, then one per changeMs', () => {
    const clock = new ManualClock(0);
    const inner = new LocalPresence(60_000, () => clock.now());
    const steady = new SteadyCount(inner, {
      burst: 2,
      changeMs: 1_000,
      maxRooms: 10,
      now: () => clock.now(),
    });
    expect(steady.count('r')).toBe(0);
    steady.touch('r', 'a');
    expect(steady.count('r')).toBe(1);
    steady.touch('r', 'b');
    expect(steady.count('r')).toBe(2);
    steady.touch('r', 'c');
    expect(steady.count('r')).toBe(2); // the burst is spent
    clock.advance(999);
    expect(steady.count('r')).toBe(2);
    clock.advance(1);
    expect(steady.count('r')).toBe(3); // one change a second
    steady.touch('r', 'd');
    expect(steady.count('r')).toBe(3);
  });

  it('holds the list of names with the count, renames included, on the same tokens', () => {
    const clock = new ManualClock(0);
    const inner = new LocalPresence(60_000, () => clock.now());
    const steady = new SteadyCount(inner, {
      burst: 1,
      changeMs: 1_000,
      maxRooms: 10,
      now: () => clock.now(),
    });
    steady.touch('r', 'client-a', 'Ann');
    expect(steady.people('r').names).toEqual(['Ann']);
    steady.touch('r', 'client-a', 'Anna'); // a rename: the bucket's one token
    expect(steady.people('r').names).toEqual(['Anna']);
    steady.touch('r', 'client-a', 'Annie');
    steady.touch('r', 'client-b', 'Bob');
    expect(steady.people('r').names).toEqual(['Anna']); // held
    expect(steady.count('r')).toBe(1);
    clock.advance(1_000);
    expect(steady.count('r')).toBe(2);
    expect(steady.people('r').names).toEqual(['Annie', 'Bob']);
  });
});
