/**
 * Fair shares behind one address (docs/design.md, "Limits"): thirty people
 * behind one NAT (one loopback address, a browser each: its own client id
 * and its own connections) and one hostile neighbour at the same address.
 * Whatever the neighbour does with one browser (holds as many polls as it
 * can, sends as fast as it can, floods typing notices, opens connections it
 * never uses), it uses up its own share of each budget, not theirs: each of
 * the thirty keeps at least 95% of their sends, and their polls and typing
 * notices are served. Every budget is at its default, over real HTTP.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { defaults } from '../../server/core/config.ts';
import { startTestChat, type TestChat, until } from '../helpers/chat.ts';
import { type AddressAnswer, type FromAddress, fromAddress } from '../helpers/from-address.ts';

/** The NAT: everyone here, neighbour included, comes from this one address. */
const NAT = '127.0.0.9';
const PEOPLE = 30;
/** Each person's sends: a few messages at a person's pace, all within one window of the limits. */
const SENDS = 4;

let chat: TestChat;
const opened: FromAddress[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await chat?.close();
  for (const browser of opened.splice(0)) browser.close();
});

function browser(maxSockets?: number): FromAddress {
  const opened_ = fromAddress(chat.url, NAT, maxSockets);
  opened.push(opened_);
  return opened_;
}

const json = { 'content-type': 'application/json' };
const clientId = (name: string) => `client-${name}-0123456789abcdef`;

/** Every budget at its default, as a chat behind a NAT meets them. */
async function startChat(): Promise<void> {
  chat = await startTestChat({
    sendRatePerSec: defaults.sendRatePerSec,
    sendKbPerHour: defaults.sendKbPerHour,
    historyRatePerSec: defaults.historyRatePerSec,
    pollTimeoutMs: 20_000,
  });
}

interface Outcome {
  poll: AddressAnswer;
  sends: number[];
  typing: number[];
}

/**
 * One person: a poll in the room, a typing notice, then their sends one
 * after another, as the page does; resolves with every status, the poll's
 * answer last (the room's messages answer it).
 */
async function person(name: string): Promise<Outcome> {
  const page = browser();
  const client = clientId(name);
  const poll = page('GET', `/recv?room=main&since=0&client=${client}`);
  const typing = [
    (
      await page('POST', '/typing', {
        headers: json,
        body: JSON.stringify({ room: 'main', client, nickname: name }),
      })
    ).status,
  ];
  const sends: number[] = [];
  for (let i = 0; i < SENDS; i += 1) {
    const sent = await page('POST', '/send', {
      headers: json,
      body: JSON.stringify({ room: 'main', client, nickname: name, text: `${name} ${i}` }),
    });
    sends.push(sent.status);
  }
  return { poll: await poll, sends, typing };
}

/** The thirty, together; then what each got. */
async function thirtyPeople(): Promise<Outcome[]> {
  return Promise.all(Array.from({ length: PEOPLE }, (_, i) => person(`p${i}`)));
}

/** Each of the thirty kept at least 95% of their sends, and had their poll and typing notice served. */
function expectServed(outcomes: Outcome[]): void {
  const kept = (sends: number[]) => sends.filter((status) => status === 200).length / sends.length;
  expect({
    peopleWhoLostMoreThan5PercentOfTheirSends: outcomes.filter(({ sends }) => kept(sends) < 0.95)
      .length,
    pollsNotServed: outcomes.filter(({ poll }) => poll.status !== 200).length,
    typingNoticesNotServed: outcomes.filter(({ typing }) => typing.some((s) => s !== 200)).length,
  }).toEqual({
    peopleWhoLostMoreThan5PercentOfTheirSends: 0,
    pollsNotServed: 0,
    typingNoticesNotServed: 0,
  });
}

/** Runs `flood` in `lanes` loops until `stop` is set; resolves with the statuses it got. */
function flood(lanes: number, request: () => Promise<AddressAnswer>) {
  let stop = false;
  const statuses: number[] = [];
  const loops = Array.from({ length: lanes }, async () => {
    while (!stop) statuses.push((await request()).status);
  });
  return {
    statuses,
    async end() {
      stop = true;
      await Promise.all(loops);
    },
  };
}

describe('thirty people behind one address, with one hostile neighbour', () => {
  it('each keeps their sends, polls and typing while the neighbour holds as many polls as it can', async () => {
    await startChat();
    const greedy = browser(1_000);
    const client = clientId('greedy');
    const tries = defaults.maxPollsPerAddress + 50;
    const held = Array.from({ length: tries }, () =>
      greedy('GET', `/recv?room=hold&since=0&client=${client}`),
    );
    // It holds what it can: every one of its polls waits or is refused.
    const refused: AddressAnswer[] = [];
    // The polls still held end as the chat closes, with their sockets.
    for (const poll of held)
      poll.then(
        (answer) => refused.push(answer),
        () => {},
      );
    await until(
      () => chat.hub.waiting + refused.length === tries,
      'the neighbour to hold its polls',
      15_000,
    );
    // Its own share, not the address's.
    expect(chat.hub.waiting).toBe(defaults.maxPollsPerClient);
    expectServed(await thirtyPeople());
  });

  const floods: Array<[string, string, Record<string, string>, string]> = [
    [
      'sends as fast as it can',
      '/send',
      json,
      JSON.stringify({ room: 'main', client: clientId('greedy'), text: 'spam' }),
    ],
    [
      'sends as fast as it can without a client id (curl)',
      '/send',
      { 'content-type': 'application/x-www-form-urlencoded' },
      new URLSearchParams({ text: 'spam' }).toString(),
    ],
    [
      'floods typing notices',
      '/typing',
      json,
      JSON.stringify({ room: 'main', client: clientId('greedy'), nickname: 'Greedy' }),
    ],
  ];
  for (const [what, path, headers, body] of floods) {
    it(`each keeps their sends, polls and typing while the neighbour ${what}`, async () => {
      await startChat();
      const greedy = browser();
      const spam = flood(4, () => greedy('POST', path, { headers, body }));
      await until(() => spam.statuses.includes(429), 'the neighbour to meet its limit');
      const outcomes = await thirtyPeople();
      await spam.end();
      expectServed(outcomes);
    });
  }

  it('each keeps their sends, polls and typing while the neighbour opens connections it never uses', async () => {
    await startChat();
    const { port } = new URL(chat.url);
    const count = defaults.maxConnectionsPerAddress + 50;
    let connected = 0;
    for (let i = 0; i < count; i += 1) {
      const socket = connect({ host: '127.0.0.1', port: Number(port), localAddress: NAT });
      socket.on('connect', () => {
        connected += 1;
      });
      socket.on('error', () => {});
      sockets.push(socket);
    }
    await until(() => connected === count, 'the neighbour’s connections to open', 10_000);
    expectServed(await thirtyPeople());
  });
});

describe('a poll served uncounted past PRESENCE_CLIENTS_PER_ADDRESS', () => {
  it('keeps a share of its own, so the people of a big NAT past the cap still wait', async () => {
    chat = await startTestChat({ presenceClientsPerAddress: 1, maxPollsPerClient: 1 });
    const page = browser();
    // Ann is counted online (her first poll is answered at once, with the room's list).
    expect((await page('GET', `/recv?room=main&since=0&client=${clientId('ann')}`)).status).toBe(
      200,
    );
    // Bob and Cid are past the cap: served uncounted, each in a share of his own.
    const answered: number[] = [];
    for (const name of ['bob', 'cid']) {
      page('GET', `/recv?room=main&since=0&client=${clientId(name)}`).then(
        (answer) => answered.push(answer.status),
        () => {},
      );
    }
    await until(() => chat.hub.waiting + answered.length === 2, 'both polls to wait');
    expect(answered).toEqual([]);
  });
});
