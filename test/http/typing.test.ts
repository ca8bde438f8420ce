/**
 * `POST /typing` and the who-is-here fields of `GET /recv`, over real HTTP
 * on loopback. The hub runs on a manual clock where the typing wakes' pace
 * is checked, so no test waits out the 2–3 s between two wakes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_NICKNAME, limits, type RecvAnswer } from '../../protocol/protocol.ts';
import { peopleOf } from '../../server/presence/people.ts';
import { startTestChat, type TestChat, until } from '../helpers/chat.ts';
import { fromAddress } from '../helpers/from-address.ts';
import { ManualClock } from '../helpers/manual-clock.ts';

let chat: TestChat;
afterEach(async () => {
  await chat?.close();
});

const ANN = { room: 'main', client: 'client-ann', nickname: 'Ann' };

function form(fields: Record<string, string>, headers: Record<string, string> = {}) {
  return chat.get('/typing', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

/**
 * A client's first poll (answered at once), then its next one, with the
 * list's version: resolves once that one waits, with its answer to come.
 */
async function waitingPoll(
  client: string,
  cursor = 0,
  nickname = 'Zed',
): Promise<{ answer: Promise<RecvAnswer> }> {
  const first = await chat.recv(`since=${cursor}&client=${client}&nickname=${nickname}`);
  const waiters = chat.hub.waiting;
  const answer = chat.recv(
    `since=${cursor}&client=${client}&nickname=${nickname}&people=${first.people?.version}`,
  );
  await until(() => chat.hub.waiting === waiters + 1, 'the poll to wait');
  return { answer };
}

describe('POST /typing', () => {
  describe('when a poll waits in the room', () => {
    it('answers it with the typist, the cursor unchanged, typingOnly', async () => {
      chat = await startTestChat();
      const hello = await chat.send({ text: 'hello' });
      const poll = await waitingPoll('client-zed', hello.id);
      const posted = await chat.post('/typing', ANN);
      expect(posted.status).toBe(200);
      expect(await posted.json()).toEqual({ status: 'ok' });
      const answer = await poll.answer;
      expect(answer).toMatchObject({
        messages: [],
        cursor: hello.id,
        typing: [{ nickname: 'Ann', client: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/) }],
        typingOnly: true,
      });
    });

    it('takes a form too, and a typist without a nickname is Anonymous', async () => {
      chat = await startTestChat();
      const poll = await waitingPoll('client-zed');
      expect((await form({ client: 'client-ann' })).status).toBe(200);
      expect((await poll.answer).typing).toEqual([
        { nickname: DEFAULT_NICKNAME, client: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/) },
      ]);
    });
  });

  describe('a typing event', () => {
    it('stores nothing: /history is unchanged and ids stay dense', async () => {
      chat = await startTestChat();
      const first = await chat.send({ text: 'one' });
      const before = await (await chat.get('/history')).json();
      for (let i = 0; i < 3; i += 1) expect((await chat.post('/typing', ANN)).status).toBe(200);
      expect(await (await chat.get('/history')).json()).toEqual(before);
      const second = await chat.send({ text: 'two' });
      expect(second.id).toBe(first.id + 1);
    });

    it('leaves the 2011 poll (no since) waiting, then it gets the next message', async () => {
      const clock = new ManualClock();
      chat = await startTestChat({ pollTimeoutMs: 60_000, typingWakeMs: 2_500 }, { clock });
      const old = chat.recv('');
      await until(() => chat.hub.waiting === 1, 'the 2011 poll to wait');
      for (let i = 0; i < 3; i += 1) {
        expect((await chat.post('/typing', { ...ANN, client: `client-ann-${i}` })).status).toBe(
          200,
        );
        clock.advance(2_500);
      }
      expect(chat.hub.waiting).toBe(1);
      const hi = await chat.send({ text: 'hi' });
      const answer = await old;
      expect(answer.messages).toEqual([hi.message]);
      expect(answer).not.toHaveProperty('typing');
    });
  });

  describe('stopped', () => {
    it('drops the typist, as JSON or a form, told with the next wake', async () => {
      const clock = new ManualClock();
      chat = await startTestChat({ pollTimeoutMs: 60_000, typingWakeMs: 2_500 }, { clock });
      const first = await waitingPoll('client-zed');
      await chat.post('/typing', ANN);
      await chat.post('/typing', { ...ANN, client: 'client-bob', nickname: 'Bob' });
      expect((await first.answer).typing?.map((t) => t.nickname)).toEqual(['Ann']);
      const again = async () => {
        const waiters = chat.hub.waiting;
        const answer = chat.recv('since=0&client=client-zed&nickname=Zed');
        await until(() => chat.hub.waiting === waiters + 1, 'the poll to wait');
        return { answer };
      };
      let poll = await again();
      expect((await chat.post('/typing', { ...ANN, stopped: true })).status).toBe(200);
      clock.advance(2_500);
      expect((await poll.answer).typing?.map((t) => t.nickname)).toEqual(['Bob']);
      poll = await again();
      expect((await form({ client: 'client-bob', stopped: 'true' })).status).toBe(200);
      clock.advance(2_500);
      expect((await poll.answer).typing).toEqual([]);
    });
  });

  describe('a flood from one address', () => {
    it('gets 429 typing_rate_limited past its own budget, and sends are still taken', async () => {
      chat = await startTestChat({ typingRatePerSec: 1, typingBurst: 5, sendRatePerSec: 5 });
      const statuses: number[] = [];
      for (let i = 0; i < 8; i += 1) statuses.push((await chat.post('/typing', ANN)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
      const refused = await chat.post('/typing', ANN);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
        'typing_rate_limited',
      );
      expect((await chat.post('/send', { text: 'still here' })).status).toBe(200);
    });

    it('wakes the room at most once per typingWakeMs', async () => {
      const clock = new ManualClock();
      chat = await startTestChat(
        { pollTimeoutMs: 60_000, typingWakeMs: 2_500, typingBurst: 100, typistsPerAddress: 0 },
        { clock },
      );
      const first = await waitingPoll('client-zed');
      await chat.post('/typing', ANN);
      expect((await first.answer).typingOnly).toBe(true);
      const poll = chat.recv(
        `since=0&client=client-zed&nickname=Zed&people=${peopleOf(['Zed'], 1).version}`,
      );
      await until(() => chat.hub.waiting === 1, 'the next poll to wait');
      for (let i = 0; i < 20; i += 1)
        await chat.post('/typing', { ...ANN, client: `client-${i}-xx` });
      clock.advance(2_499);
      expect(chat.hub.waiting).toBe(1);
      clock.advance(1);
      const woken = await poll;
      expect(woken.typingOnly).toBe(true);
      expect(woken.typing).toHaveLength(limits.maxTypistsNamed);
      expect(woken.typingMore).toBe(21 - limits.maxTypistsNamed);
    });
  });

  describe('bounded', () => {
    const typingPart = (raw: string) => {
      const answer = JSON.parse(raw) as RecvAnswer;
      return JSON.stringify({ typing: answer.typing, typingMore: answer.typingMore });
    };

    it('names at most a few of 50 typists from 50 addresses, counts the rest, in under 1 KB', async () => {
      const clock = new ManualClock();
      chat = await startTestChat({ pollTimeoutMs: 60_000, typingWakeMs: 2_500 }, { clock });
      const first = await waitingPoll('client-zed');
      await chat.post('/typing', ANN);
      expect((await first.answer).typing).toHaveLength(1);
      const zed = fromAddress(chat.url, '127.0.0.1');
      const waiters = chat.hub.waiting;
      const poll = zed('GET', '/recv?since=0&client=client-zed&nickname=Zed');
      await until(() => chat.hub.waiting === waiters + 1, 'the poll to wait');
      const senders = Array.from({ length: 49 }, (_, i) =>
        fromAddress(chat.url, `127.0.1.${i + 1}`),
      );
      try {
        for (const [i, send] of senders.entries()) {
          const answer = await send('POST', '/typing', {
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              client: `client-${i}-${'x'.repeat(50)}`,
              nickname: `${'N'.repeat(29)}${i}`,
            }),
          });
          expect(answer.status).toBe(200);
        }
        clock.advance(2_500);
        const raw = (await poll).body;
        const answer = JSON.parse(raw) as RecvAnswer;
        expect(answer.typingOnly).toBe(true);
        expect(answer.typing).toHaveLength(5);
        expect(answer.typingMore).toBe(45);
        expect(Buffer.byteLength(typingPart(raw))).toBeLessThan(1_024);
      } finally {
        for (const send of senders) send.close();
        zed.close();
      }
    });

    it('takes at most typistsPerAddress typists from one address in a room, until one stops', async () => {
      const clock = new ManualClock();
      chat = await startTestChat(
        { pollTimeoutMs: 60_000, typingWakeMs: 2_500, typingTtlMs: 60_000 },
        { clock },
      );
      const first = await waitingPoll('client-zed');
      for (let i = 0; i < 10; i += 1) {
        expect(
          (await chat.post('/typing', { client: `client-fake-${i}`, nickname: `Fake ${i}` }))
            .status,
        ).toBe(200);
      }
      expect((await first.answer).typing?.map((t) => t.nickname)).toEqual(['Fake 0']);
      const again = async () => {
        const waiters = chat.hub.waiting;
        const answer = chat.recv('since=0&client=client-zed&nickname=Zed');
        await until(() => chat.hub.waiting === waiters + 1, 'the poll to wait');
        return { answer };
      };
      let poll = await again();
      clock.advance(2_500);
      let answer = await poll.answer;
      expect(answer.typing?.map((t) => t.nickname)).toEqual(['Fake 0', 'Fake 1']);
      expect(answer).not.toHaveProperty('typingMore');
      // Another address is not held by that one's cap.
      const other = fromAddress(chat.url, '127.0.0.2');
      try {
        await other('POST', '/typing', {
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ client: 'client-ann', nickname: 'Ann' }),
        });
      } finally {
        other.close();
      }
      // One stops: a new one from that address takes its place.
      await chat.post('/typing', { client: 'client-fake-0', stopped: true });
      await chat.post('/typing', { client: 'client-fake-7', nickname: 'Fake 7' });
      poll = await again();
      clock.advance(2_500);
      answer = await poll.answer;
      expect(answer.typing?.map((t) => t.nickname)).toEqual(['Fake 1', 'Ann', 'Fake 7']);
    });
  });

  describe('client ids stay secret', () => {
    const ANN_ID = 'ann-secret-client-id-0123456789';
    const ZED_ID = 'zed-secret-client-id-9876543210';

    it('no answer carries another browser’s client id; a poll is not told its own typing', async () => {
      chat = await startTestChat({ pollTimeoutMs: 60_000 });
      const ann = fromAddress(chat.url, '127.0.0.1');
      const zed = fromAddress(chat.url, '127.0.0.2');
      try {
        const raws: string[] = [];
        /** Polls until the poll waits (an answer with news is taken, and its list's version sent back). */
        const poll = async (from: typeof ann, client: string, nickname: string) => {
          let version = (JSON.parse(raws.at(-1) ?? '{}') as RecvAnswer).people?.version ?? 0;
          for (;;) {
            const waiters = chat.hub.waiting;
            let answered = false;
            const answer = from(
              'GET',
              `/recv?since=0&client=${client}&nickname=${nickname}&people=${version}`,
            ).then((got) => {
              answered = true;
              return got;
            });
            await until(() => answered || chat.hub.waiting === waiters + 1, 'the poll to wait');
            if (!answered) return { answer };
            const got = await answer;
            raws.push(got.body);
            version = (JSON.parse(got.body) as RecvAnswer).people?.version ?? version;
          }
        };
        // Both are in the room before either waits: a join wakes nobody in between.
        raws.push((await ann('GET', `/recv?since=0&client=${ANN_ID}&nickname=Ann`)).body);
        raws.push((await zed('GET', `/recv?since=0&client=${ZED_ID}&nickname=Zed`)).body);
        const annPoll = await poll(ann, ANN_ID, 'Ann');
        const zedPoll = await poll(zed, ZED_ID, 'Zed');
        const typed = await ann('POST', '/typing', {
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ client: ANN_ID, nickname: 'Ann' }),
        });
        raws.push(typed.body);
        const [toAnn, toZed] = [(await annPoll.answer).body, (await zedPoll.answer).body];
        raws.push(toAnn, toZed);
        const zedSees = JSON.parse(toZed) as RecvAnswer;
        expect(zedSees.typing).toHaveLength(1);
        expect(zedSees.typing?.[0]?.nickname).toBe('Ann');
        expect(zedSees.typing?.[0]?.client).toMatch(/^[A-Za-z0-9_-]{22}$/);
        // Ann's own page is told nobody else types.
        expect(JSON.parse(toAnn) as RecvAnswer).toMatchObject({ typing: [], typingOnly: true });
        for (const raw of raws) expect(raw).not.toContain(ANN_ID);
        for (const raw of raws) expect(raw).not.toContain(ZED_ID);
      } finally {
        ann.close();
        zed.close();
      }
    });

    it('tags a browser alike on processes sharing PRESENCE_TAG_SECRET, and apart per room', async () => {
      const tagFrom = async (target: TestChat, room: string) => {
        const query = `since=0&room=${room}&client=${ZED_ID}&nickname=Zed`;
        const first = await target.recv(query);
        const waiters = target.hub.waiting;
        const poll = target.recv(`${query}&people=${first.people?.version}`);
        await until(() => target.hub.waiting === waiters + 1, 'the poll to wait');
        await target.post('/typing', { client: ANN_ID, nickname: 'Ann', room });
        return (await poll).typing?.[0]?.client;
      };
      chat = await startTestChat({ presenceTagSecret: 'shared-secret' });
      const other = await startTestChat({ presenceTagSecret: 'shared-secret' });
      try {
        const here = await tagFrom(chat, 'main');
        expect(here).toMatch(/^[A-Za-z0-9_-]{22}$/);
        expect(await tagFrom(other, 'main')).toBe(here);
        expect(await tagFrom(other, 'dev')).not.toBe(here);
      } finally {
        await other.close();
      }
    });
  });

  describe('is refused', () => {
    it('from another site, like a send', async () => {
      chat = await startTestChat();
      const res = await chat.post('/typing', ANN, {
        headers: { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' },
      });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('cross_site');
    });

    it('past the body limit, in another charset, or neither JSON nor a form, as a send is', async () => {
      chat = await startTestChat();
      const codeOf = async (res: Response) =>
        ((await res.json()) as { error: { code: string } }).error.code;
      const big = await chat.post('/typing', { ...ANN, nickname: 'x'.repeat(20_000) });
      expect(big.status).toBe(413);
      expect(await codeOf(big)).toBe('body_too_large');
      const latin = await chat.get('/typing', {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=iso-8859-1' },
        body: JSON.stringify(ANN),
      });
      expect(latin.status).toBe(415);
      const text = await chat.get('/typing', {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'typing',
      });
      expect(await codeOf(text)).toBe('unsupported_media_type');
    });

    it('without a client id, with a bad nickname, or a bad room', async () => {
      chat = await startTestChat();
      const code = async (body: unknown) =>
        ((await (await chat.post('/typing', body)).json()) as { error: { code: string } }).error
          .code;
      expect(await code({ nickname: 'Ann' })).toBe('client_required');
      expect(await code({ client: 'x' })).toBe('invalid_client');
      expect(await code({ client: 'client-ann', nickname: 'Ann\u202Enimda' })).toBe(
        'invalid_nickname',
      );
      expect(await code({ client: 'client-ann', room: 'Dev' })).toBe('invalid_room');
      expect((await chat.get('/typing')).status).toBe(405);
    });
  });
});

describe('GET /recv, who is here', () => {
  it('lists each client under its nickname, and a bad nickname as Anonymous, never refused', async () => {
    chat = await startTestChat();
    await chat.recv('since=0&client=client-ann&nickname=Ann');
    const bob = await chat.recv(
      `since=0&client=client-bob&nickname=${encodeURIComponent('Bob\u202E')}`,
    );
    expect(bob.people).toEqual(peopleOf(['Ann', DEFAULT_NICKNAME], 2));
  });

  it('sends the names only while the version sent back is not the room’s', async () => {
    chat = await startTestChat();
    await chat.send({ text: 'one' });
    const first = await chat.recv('since=0&client=client-ann&nickname=Ann');
    expect(first.people).toEqual(peopleOf(['Ann'], 1));
    const again = await chat.recv(
      `since=0&client=client-ann&nickname=Ann&people=${first.people!.version}`,
    );
    expect(again).not.toHaveProperty('people');
    const stale = await chat.recv('since=0&client=client-ann&nickname=Ann&people=12345');
    expect(stale.people).toEqual(first.people);
  });
});

describe('GET /recv, a client id held by another address', () => {
  it('does not rename the browser that holds it while that one polls', async () => {
    chat = await startTestChat();
    const alice = fromAddress(chat.url, '127.0.0.1');
    const stranger = fromAddress(chat.url, '127.0.0.2');
    const id = 'alice-client-id-0123456789abcdef';
    try {
      const first = await alice('GET', `/recv?since=0&client=${id}&nickname=Alice`);
      const version = (JSON.parse(first.body) as RecvAnswer).people?.version;
      const waiters = chat.hub.waiting;
      const waiting = alice('GET', `/recv?since=0&client=${id}&nickname=Alice&people=${version}`);
      await until(() => chat.hub.waiting === waiters + 1, 'the poll to wait');
      const spoof = await stranger(
        'GET',
        `/recv?since=0&client=${id}&nickname=${encodeURIComponent('Alice (scammer)')}`,
      );
      expect(spoof.status).toBe(200);
      const bob = await chat.recv('since=0&client=client-bob&nickname=Bob');
      expect(bob.people?.names).toEqual(['Alice', 'Bob']);
      await chat.send({ text: 'end the wait' });
      await waiting;
    } finally {
      alice.close();
      stranger.close();
    }
  });
});

describe('GET /recv, a fair list', () => {
  it('shows at most a few names from one address, so 100 of them leave 3 real people listed', async () => {
    // Every change shows at once: the count's pace is steady-count's suite.
    chat = await startTestChat({ presenceChangeMs: 0 });
    const flood = fromAddress(chat.url, '127.0.0.5');
    const real = ['Ann', 'Bob', 'Cy'].map((name, i) => ({
      name,
      from: fromAddress(chat.url, `127.0.0.${i + 2}`),
    }));
    try {
      for (const { name, from } of real) {
        expect(
          (await from('GET', `/recv?since=0&client=client-${name}-real&nickname=${name}`)).status,
        ).toBe(200);
      }
      for (let i = 0; i < 100; i += 1) {
        const nickname = encodeURIComponent(`!${String(i).padStart(5, '0')} Alice`);
        expect(
          (await flood('GET', `/recv?since=0&client=client-flood-${i}&nickname=${nickname}`))
            .status,
        ).toBe(200);
      }
      // A newcomer's first poll is answered at once, with the list.
      const seen = await chat.recv('since=0&client=client-zed-real&nickname=Zed');
      expect(seen.online).toBe(104);
      expect(seen.people?.names).toEqual([
        '!00000 Alice',
        '!00001 Alice',
        '!00002 Alice',
        'Ann',
        'Bob',
        'Cy',
        'Zed',
      ]);
      expect(seen.people?.more).toBe(97);
      expect(seen.people?.names.filter((name) => name.endsWith('Alice'))).toHaveLength(3);
    } finally {
      flood.close();
      for (const { from } of real) from.close();
    }
  });
});
