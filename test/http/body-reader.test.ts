/**
 * The one body reader (server/http/body-reader.ts): `POST /send` and
 * `POST /typing` read their bodies with the same limits, refuse alike, and
 * run their checks in the same order (the rate limit before any body is
 * looked at past its type).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { limits } from '../../protocol/protocol.ts';
import { startTestChat, type TestChat } from '../helpers/chat.ts';

let chat: TestChat;
afterEach(async () => {
  await chat?.close();
});

/** A body each route takes: its fields, by route. */
const FIELDS = {
  '/send': { text: 'hi' },
  '/typing': { room: 'main', client: 'client-ann', nickname: 'Ann' },
} as const;

const ROUTES = Object.keys(FIELDS) as (keyof typeof FIELDS)[];

async function codeOf(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code;
}

function post(path: string, body: string, headers: Record<string, string>) {
  return chat.get(path, { method: 'POST', headers, body });
}

describe('a body refused by the reader', () => {
  // [when, body, content-type, code]
  const REFUSALS: [string, string, string, string][] = [
    [
      'past the size limit',
      JSON.stringify({ text: 'x'.repeat(limits.maxBodyBytes) }),
      'application/json',
      'body_too_large',
    ],
    [
      'a form with more fields than the limit',
      Array.from({ length: limits.maxFields + 1 }, (_, i) => `f${i}=1`).join('&'),
      'application/x-www-form-urlencoded',
      'too_many_fields',
    ],
    [
      'in a charset other than UTF-8',
      '{}',
      'application/json; charset=utf-16le',
      'unsupported_media_type',
    ],
    ['of no JSON', '{', 'application/json', 'invalid_json'],
    ['of another type', 'hi', 'text/plain', 'unsupported_media_type'],
  ];
  for (const [name, body, type, code] of REFUSALS) {
    it(`is refused alike by /send and /typing when ${name}`, async () => {
      chat = await startTestChat();
      const headers = { 'content-type': type };
      const answers = await Promise.all(ROUTES.map((path) => post(path, body, headers)));
      const statuses = answers.map((res) => res.status);
      expect(new Set(statuses).size).toBe(1);
      expect(await Promise.all(answers.map(codeOf))).toEqual([code, code]);
    });
  }
});

describe('a client past its rate limit', () => {
  for (const path of ROUTES) {
    // A body that cannot be read names no `client`, so it counts in its
    // address's anonymous share (rate-limit.ts): the limit still holds, and
    // once that share is spent a body too large is refused for the limit.
    it(`gets 429 on ${path}, its body too large to read counted in the anonymous share`, async () => {
      chat = await startTestChat({
        sendRatePerSec: 1,
        sendBurst: 1,
        typingRatePerSec: 1,
        typingBurst: 1,
      });
      const ok = await post(path, JSON.stringify(FIELDS[path]), {
        'content-type': 'application/json',
      });
      expect(ok.status).toBe(200);
      const tooLarge = JSON.stringify({ text: 'x'.repeat(limits.maxBodyBytes) });
      const statuses: number[] = [];
      for (let i = 0; i < 2; i++) {
        statuses.push((await post(path, tooLarge, { 'content-type': 'application/json' })).status);
      }
      expect(statuses.at(-1)).toBe(429);
    });
  }
});
