/**
 * Store what you deliver, byte for byte: what `POST /send` accepts reads back
 * from `/history` exactly as it was delivered live, on every real store here;
 * what a store could not keep as sent (a lone surrogate) is refused with its
 * own code, and nicknames cannot carry direction overrides or isolates.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Message } from '../../protocol/protocol.ts';
import { openStore } from '../../server/store/open-store.ts';
import { startTestChat, type TestChat, until } from '../helpers/chat.ts';
import { serviceUrl } from '../helpers/env.ts';
import { type TestDatabases, testDatabases } from '../store/mysql-database.ts';

let chat: TestChat | undefined;
afterEach(async () => {
  await chat?.close();
  chat = undefined;
});

const errorCode = async (res: Response) => ({
  status: res.status,
  code: ((await res.json()) as { error?: { code: string } }).error?.code,
});

describe('POST /send with text a store cannot keep as sent', () => {
  const cases: [string, Record<string, string>][] = [
    ['a lone high surrogate in the text', { text: 'lone \ud800 x' }],
    ['a lone low surrogate in the text', { text: 'lone \udc00' }],
    ['a pair written backwards', { text: 'swapped \ude00\ud83d' }],
    ['a lone surrogate in the nickname', { text: 'hi', nickname: 'Ann\ud800' }],
  ];
  for (const [what, fields] of cases) {
    it(`answers invalid_unicode (400) for ${what}, and stores nothing`, async () => {
      chat = await startTestChat();
      expect(await errorCode(await chat.post('/send', fields))).toEqual({
        status: 400,
        code: 'invalid_unicode',
      });
      expect(await chat.store.after('main', 0, 10)).toEqual([]);
    });
  }

  it('accepts whole surrogate pairs (emoji, astral letters)', async () => {
    chat = await startTestChat();
    const { message } = await chat.send({ text: '😀 𝒜 𐍈', nickname: '🦊' });
    expect(message).toMatchObject({ text: '😀 𝒜 𐍈', nickname: '🦊' });
  });
});

describe('POST /send with a nickname that changes the direction of text', () => {
  const controls: [string, string][] = [
    ['U+202A left-to-right embedding', '\u202a'],
    ['U+202B right-to-left embedding', '\u202b'],
    ['U+202C pop directional formatting', '\u202c'],
    ['U+202D left-to-right override', '\u202d'],
    ['U+202E right-to-left override', '\u202e'],
    ['U+2066 left-to-right isolate', '\u2066'],
    ['U+2067 right-to-left isolate', '\u2067'],
    ['U+2068 first strong isolate', '\u2068'],
    ['U+2069 pop directional isolate', '\u2069'],
  ];
  for (const [what, control] of controls) {
    it(`answers invalid_nickname (400) for ${what}`, async () => {
      chat = await startTestChat();
      const res = await chat.post('/send', { text: 'hi', nickname: `Ann${control}nimda` });
      expect(await errorCode(res)).toEqual({ status: 400, code: 'invalid_nickname' });
      expect(await chat.store.after('main', 0, 10)).toEqual([]);
    });
  }

  it('explains which characters are refused', async () => {
    chat = await startTestChat();
    const res = await chat.post('/send', { text: 'hi', nickname: 'Ann\u202e' });
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/U\+202A-U\+202E, U\+2066-U\+2069/);
  });

  it('accepts right-to-left nicknames and texts, and direction controls inside a text', async () => {
    chat = await startTestChat();
    const { message } = await chat.send({
      nickname: 'نور',
      text: 'שלום \u2067עולם\u2069 hello',
    });
    expect(message).toMatchObject({ nickname: 'نور', text: 'שלום \u2067עולם\u2069 hello' });
  });
});

/** Texts that exercise encodings: every one must read back as it was delivered. */
const tricky = [
  'plain ascii',
  'é (precomposed) and e\u0301 (combining)',
  '😀👩‍👩‍👧 ZWJ family, 🇫🇷 flag, 𝒜 astral',
  'U+FFFD \ufffd kept as itself',
  'noncharacters \ufffe \uffff and \u{10ffff}',
  '中文 日本語 한국어 العربية עברית',
  'zero\u200bwidth\u200cjoiners\u200d',
  'line one\nline two\ttabbed',
  'quotes " \' \\ and <b>tags</b> & entities &amp;',
  `${'x'.repeat(1999)}😀`,
];

const sqliteDir = mkdtempSync(join(tmpdir(), 'chat-text-'));
afterAll(() => rmSync(sqliteDir, { recursive: true, force: true }));
const mysqlUrl = serviceUrl('MYSQL_URL');
let mysqlDatabases: TestDatabases | undefined;
afterAll(async () => {
  await mysqlDatabases?.dropAll();
});

const stores: [string, () => Promise<string>][] = [
  ['memory', async () => 'memory:'],
  ['SQLite', async () => `sqlite:${join(sqliteDir, 'chat.sqlite')}`],
];
if (mysqlUrl === undefined) {
  console.warn('MYSQL_URL is not set: the byte-for-byte text test runs on memory and SQLite only');
} else {
  stores.push([
    'MySQL',
    async () => {
      mysqlDatabases ??= testDatabases(mysqlUrl);
      return mysqlDatabases.create();
    },
  ]);
}

describe('text that was accepted', () => {
  for (const [kind, databaseUrl] of stores) {
    it(`reads back from /history byte for byte as it was delivered live (${kind})`, async () => {
      chat = await startTestChat({}, { store: await openStore(await databaseUrl()) });
      const poll = chat.recv('room=bytes&since=0');
      await until(() => chat!.hub.waiting === 1, 'the poll to wait');
      const acknowledged: Message[] = [];
      for (const text of tricky) {
        acknowledged.push((await chat.send({ room: 'bytes', text, nickname: 'Zoë 🦊' })).message);
      }
      const live = (await poll).messages[0]!;
      const history = (
        (await (await chat.get('/history?room=bytes&limit=100')).json()) as { messages: Message[] }
      ).messages;
      expect(live).toEqual(acknowledged[0]);
      expect(history.map((m) => m.text)).toEqual(tricky);
      expect(history).toEqual(acknowledged);
      for (const [i, message] of history.entries()) {
        expect(Buffer.from(message.text)).toEqual(Buffer.from(acknowledged[i]!.text));
      }
    });
  }
});
