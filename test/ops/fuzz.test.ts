/**
 * Fuzzing the public routes over real HTTP (fast-check): arbitrary bodies,
 * content types, encodings, query strings and cursors at `/send`, `/recv`
 * and `/history`. Whatever comes in:
 * - the answer is a 2xx, or a 4xx in the JSON error format with a code of
 *   the table (server/core/errors.ts); never a 5xx;
 * - it comes within a few seconds (a hang fails the run);
 * - the server stays up;
 * - every text `/send` accepted reads back from `/history` byte for byte.
 *
 * A failure prints fast-check's seed and the shrunk input; rerun it with
 * `fc.assert(…, { seed, path })`. About 10 s on a quiet machine.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../protocol/protocol.ts';
import { errorCodes } from '../../server/core/errors.ts';
import { openStore } from '../../server/store/open-store.ts';
import { startTestChat, type TestChat, until } from '../helpers/chat.ts';
import { ManualClock } from '../helpers/manual-clock.ts';

// A fixed seed: the same inputs on every run, so a pass or a failure is
// repeatable (and the count of accepted sends below cannot drift by chance).
// FUZZ_SEED=<n> explores other inputs.
fc.configureGlobal({ seed: Number(process.env.FUZZ_SEED ?? 20261201) });

/** A request not answered within this is a hang. */
const HANG_MS = 4_000;

/** A valid poll with nothing to read waits: the test moves the hub's clock past its timeout. */
const POLL_TIMEOUT_MS = 25_000;
const clock = new ManualClock();

let chat: TestChat;
const dir = mkdtempSync(join(tmpdir(), 'chat-fuzz-'));

beforeAll(async () => {
  chat = await startTestChat(
    { pollTimeoutMs: POLL_TIMEOUT_MS },
    { store: await openStore(`sqlite:${join(dir, 'fuzz.sqlite')}`), clock },
  );
});

afterAll(async () => {
  await chat?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

async function ask(path: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(chat.url + path, { ...init, signal: AbortSignal.timeout(HANG_MS) });
  return {
    status: res.status,
    contentType: res.headers.get('content-type') ?? '',
    text: await res.text(),
  };
}

/** 2xx, or a JSON 4xx whose code is in the table. */
function expectContractAnswer(answer: Answer, what: string): void {
  const label = `${what} → ${answer.status} ${answer.text.slice(0, 200)}`;
  expect(answer.status, label).toBeGreaterThanOrEqual(200);
  expect(answer.status, label).toBeLessThan(500);
  expect(answer.contentType, label).toMatch(/^application\/json/);
  const body = JSON.parse(answer.text) as { error?: { code: string; message: string } };
  if (answer.status >= 300) {
    expect(Object.keys(errorCodes), label).toContain(body.error?.code);
    expect(errorCodes[body.error!.code as keyof typeof errorCodes].status, label).toBe(
      answer.status,
    );
  }
}

/** Any code point, now and then half of a surrogate pair, a control or a direction character. */
const anyText = fc.string({
  unit: fc.oneof(
    { weight: 10, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(' ', '\n', '\t', '\r', '\0', '\u202e', '\u2066', '\ufeff'),
    },
  ),
  maxLength: 2_100,
});

const roomLike = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('main', 'fuzz', 'fuzz-2') },
  { weight: 2, arbitrary: fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,31}$/) },
  fc.constantFrom('', 'Main', '_x', 'a'.repeat(33)),
  fc.string(),
);

const cursorLike = fc.oneof(
  fc.nat().map(String),
  fc.constantFrom('-1', '1.5', '1e3', '0x10', ' 1', '9'.repeat(16), '99999999999999', '', 'abc'),
  fc.string(),
);

/** Mostly what a person types; sometimes anything at all. */
const textLike = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 300 }) },
  { weight: 3, arbitrary: anyText },
  fc.jsonValue(),
);

/** Now and then a body past the 16 KB limit. */
const padding = fc
  .integer({ min: 0, max: 19 })
  .map((n) => (n === 0 ? 'x'.repeat(17 * 1024) : undefined));

const fields = fc
  .tuple(
    fc.record(
      {
        text: textLike,
        nickname: fc.oneof(
          { weight: 6, arbitrary: fc.string({ unit: 'grapheme', maxLength: 24 }) },
          { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
          textLike,
        ),
        room: roomLike,
        key: fc.oneof(
          { weight: 4, arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/) },
          fc.string(),
        ),
      },
      { requiredKeys: ['text'] },
    ),
    // One body in ten without its text.
    fc.integer({ min: 0, max: 9 }),
    padding,
  )
  .map(([f, drop, pad]) => {
    const copy: Record<string, unknown> = { ...f };
    if (drop === 0) delete copy.text;
    if (pad !== undefined) copy.padding = pad;
    return copy;
  });

const asJson = (f: Record<string, unknown>) => Buffer.from(JSON.stringify(f));
const asForm = (f: Record<string, unknown>) => {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(f)) form.append(name, String(value));
  return Buffer.from(form.toString());
};

const anyBody = fc.oneof(
  fields.map(asJson),
  fields.map(asForm),
  fc.jsonValue().map((value) => Buffer.from(JSON.stringify(value) ?? 'null')),
  fc.uint8Array({ maxLength: 512 }).map((bytes) => Buffer.from(bytes)),
  anyText.map((text) => Buffer.from(text)),
);

const anyContentType = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/x-www-form-urlencoded',
    'application/json; charset=utf-8',
    'application/json; charset=utf-16',
    'application/x-www-form-urlencoded; charset=UTF-8',
    'application/x-www-form-urlencoded; charset=latin1',
    'text/plain',
    'multipart/form-data; boundary=x',
    'application/*',
    '',
  ),
  fc.string(),
);

const anyEncoding = fc.constantFrom(
  undefined,
  'identity',
  'gzip',
  'deflate',
  'br',
  'x-lzma',
  'gzip, br',
  'GZIP',
);
const compressors: Record<string, (bytes: Buffer) => Buffer> = {
  gzip: gzipSync,
  deflate: deflateSync,
  br: brotliCompressSync,
};

/** Header values fetch can send: no CR, LF or NUL, Latin-1 only. */
const sendable = (value: string) => /^[\t\x20-\x7e\x80-\xff]*$/.test(value);

interface Upload {
  headers: Record<string, string>;
  payload: Uint8Array;
}

function upload(body: Buffer, type: string, coding: string | undefined, honest: boolean): Upload {
  const headers: Record<string, string> = {};
  if (type !== '' && sendable(type)) headers['content-type'] = type;
  let payload: Uint8Array = body;
  if (coding !== undefined) {
    headers['content-encoding'] = coding;
    // An honest client compresses as it says; a hostile one does not.
    const compress = compressors[coding];
    if (honest && compress) payload = compress(body);
  }
  return { headers, payload };
}

/** Half the time a client as browsers and the 2011 page are; half the time anything at all. */
const sendRequest: fc.Arbitrary<Upload> = fc.oneof(
  fc
    .tuple(fields, fc.boolean(), fc.constantFrom(undefined, undefined, 'gzip', 'deflate', 'br'))
    .map(([f, json, coding]) =>
      json
        ? upload(asJson(f), 'application/json', coding, true)
        : upload(asForm(f), 'application/x-www-form-urlencoded; charset=UTF-8', coding, true),
    ),
  fc
    .tuple(anyBody, anyContentType, anyEncoding, fc.boolean())
    .map(([body, type, coding, honest]) => upload(body, type, coding, honest)),
);

describe('the public routes under fuzzing', () => {
  it('POST /send answers 2xx or a JSON 4xx, and every accepted text reads back byte for byte', async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(sendRequest, async ({ headers, payload }) => {
        const answer = await ask('/send', {
          method: 'POST',
          headers,
          body: new Uint8Array(payload),
        });
        expectContractAnswer(answer, `POST /send ${JSON.stringify(headers)}`);
        if (answer.status !== 200) return;
        accepted += 1;
        const { message } = JSON.parse(answer.text) as { message: Message };
        const page = await ask(`/history?room=${message.room}&before=${message.id + 1}&limit=1`);
        expect(page.status).toBe(200);
        const [stored] = (JSON.parse(page.text) as { messages: Message[] }).messages;
        expect(stored).toEqual(message);
        expect(Buffer.from(stored!.text)).toEqual(Buffer.from(message.text));
        expect(Buffer.from(stored!.nickname)).toEqual(Buffer.from(message.nickname));
      }),
      { numRuns: 300 },
    );
    // The run means something only if many sends got through.
    expect(accepted, `${accepted} of 300 sends accepted`).toBeGreaterThan(60);
  }, 60_000);

  it('GET /recv answers 2xx or a JSON 4xx for any query and cursor', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          { room: roomLike, since: cursorLike, client: fc.oneof(fc.string(), fc.uuid()) },
          { requiredKeys: [] },
        ),
        fc.string(),
        async (query, junk) => {
          const search = new URLSearchParams(query as Record<string, string>).toString();
          // Raw junk too: malformed escapes (`%zz`, `%E0%A4%A`) reach the server as they are.
          const pending = ask(`/recv?${search}&${junk.replaceAll('#', '%23')}`);
          let done = false;
          const settle = () => {
            done = true;
          };
          pending.then(settle, settle);
          await until(() => done || chat.hub.waiting > 0, 'the poll to be answered or to wait');
          clock.advance(POLL_TIMEOUT_MS);
          const answer = await pending;
          expectContractAnswer(answer, `GET /recv?${search}&${junk}`);
          if (answer.status === 200) {
            expect(JSON.parse(answer.text)).toMatchObject({
              messages: expect.any(Array),
              cursor: expect.any(Number),
              online: expect.any(Number),
            });
          }
        },
      ),
      { numRuns: 150 },
    );
  }, 60_000);

  it('GET /history answers 2xx or a JSON 4xx for any query and cursor', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            room: roomLike,
            before: cursorLike,
            limit: fc.oneof(fc.integer({ min: -5, max: 200 }).map(String), fc.string()),
          },
          { requiredKeys: [] },
        ),
        fc.string(),
        async (query, junk) => {
          const search = new URLSearchParams(query as Record<string, string>).toString();
          const answer = await ask(`/history?${search}&${junk.replaceAll('#', '%23')}`);
          expectContractAnswer(answer, `GET /history?${search}&${junk}`);
          if (answer.status === 200) {
            expect(JSON.parse(answer.text)).toEqual({ messages: expect.any(Array) });
          }
        },
      ),
      { numRuns: 150 },
    );
  }, 60_000);

  it('is still up and healthy afterwards', async () => {
    const health = await ask('/health');
    expect(health).toMatchObject({ status: 200, text: '{"status":"ok"}' });
  });
});
