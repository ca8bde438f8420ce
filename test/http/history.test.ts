/**
 * `GET /history` from strangers: its own budget per address
 * (`HISTORY_RATE`, `HISTORY_BURST`), and an unchanged page answered 304 to
 * a conditional request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaults } from '../../server/core/config.ts';
import { startTestChat, type TestChat } from '../helpers/chat.ts';
import { type AddressAnswer, fromAddress } from '../helpers/from-address.ts';

describe('GET /history', () => {
  let chat: TestChat;
  beforeAll(async () => {
    // The defaults of HISTORY_RATE and HISTORY_BURST.
    chat = await startTestChat({
      historyRatePerSec: defaults.historyRatePerSec,
      historyBurst: defaults.historyBurst,
    });
    await chat.send({ text: 'hello' });
  });
  afterAll(() => chat.close());

  it('gives one address 429 past its budget while another is served', async () => {
    const flood = fromAddress(chat.url, '127.0.0.1');
    const other = fromAddress(chat.url, '127.0.0.2');
    try {
      const answers: AddressAnswer[] = [];
      // 600 requests, 8 at a time.
      for (let sent = 0; sent < 600; sent += 8) {
        const batch = Array.from({ length: 8 }, () => flood('GET', '/history?room=main'));
        answers.push(...(await Promise.all(batch)));
      }
      const refused = answers.filter((answer) => answer.status === 429);
      expect(answers.filter((answer) => answer.status === 200).length).toBeLessThanOrEqual(
        chat.config.historyBurst * 2,
      );
      expect(refused.length).toBeGreaterThan(500);
      expect(JSON.parse(refused[0]!.body).error.code).toBe('history_rate_limited');
      expect(Number(refused[0]!.headers['retry-after'])).toBeGreaterThan(0);

      const served = await other('GET', '/history?room=main');
      expect(served.status).toBe(200);
      expect(JSON.parse(served.body).messages).toHaveLength(1);
    } finally {
      flood.close();
      other.close();
    }
  });

  it('answers an unchanged page 304 to If-None-Match, and a changed one 200', async () => {
    const client = fromAddress(chat.url, '127.0.0.3');
    try {
      const first = await client('GET', '/history?room=etag');
      expect(first.status).toBe(200);
      const etag = String(first.headers.etag);
      expect(etag).toMatch(/^W\/".+"$/);
      expect(first.headers['cache-control']).toBe('no-cache');

      const again = await client('GET', '/history?room=etag', {
        headers: { 'if-none-match': etag },
      });
      expect(again.status).toBe(304);
      expect(again.body).toBe('');

      await chat.send({ room: 'etag', text: 'new' });
      const changed = await client('GET', '/history?room=etag', {
        headers: { 'if-none-match': etag },
      });
      expect(changed.status).toBe(200);
      expect(changed.headers.etag).not.toBe(etag);
      expect(JSON.parse(changed.body).messages).toHaveLength(1);
    } finally {
      client.close();
    }
  });
});
