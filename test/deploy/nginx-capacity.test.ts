/**
 * 5,000 real waiting polls through the compose nginx (deploy/nginx.conf), on
 * loopback, then one message that answers them all.
 *
 * - nginx runs one worker process (the fixture's swap for
 *   `worker_processes auto`), so that one worker holds all 10,000
 *   connections: with the file's old `worker_connections 4096` it stopped
 *   near 2,000 polls.
 * - Its open-file limit is what docker-compose.yml gives the `web` service
 *   (`ulimits: nofile`), read from `docker-compose config`, capped at this
 *   machine's hard limit, which a test cannot raise; the printed line says
 *   which limit ran.
 * - The polls all reach the chat from nginx, which passes each visitor's
 *   address on (TRUST_PROXY=1, as compose sets it). The clients are spread
 *   over 127.0.0.2 to 127.0.0.60, so no address holds more than the chat's
 *   own MAX_POLLS_PER_ADDRESS (its default is left as it is).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecvAnswer, SendAnswer } from '../../protocol/protocol.ts';
import { defaults } from '../../server/core/config.ts';
import { startTestChat, type TestChat } from '../helpers/chat.ts';
import { hasCompose, MAIN_FILE, resolvedConfig } from './compose.ts';
import { type HttpAnswer, http, postJson } from './http.ts';
import { hardNofile, hasNginx, startNginx } from './nginx.ts';
import { type Proxied, startProxied, waitingPolls } from './nginx-fixtures.ts';

const POLLS = 5_000;
/** Polls opened at once before waiting for the chat to hold them: below nginx's listen backlog (511). */
const BATCH = 250;
const FIRST_CLIENT = 2;
const LAST_CLIENT = 60;
const CLIENTS = LAST_CLIENT - FIRST_CLIENT + 1;

const clientAddress = (i: number) => `127.0.0.${FIRST_CLIENT + (i % CLIENTS)}`;

describe.skipIf(!hasNginx || !hasCompose)(
  `deploy/nginx.conf holds ${POLLS.toLocaleString('en')} waiting polls`,
  () => {
    let proxied: Proxied<TestChat>;
    let nofile: number;

    beforeAll(async () => {
      const compose = await resolvedConfig(MAIN_FILE);
      const composeNofile = compose.services.web?.ulimits?.nofile?.soft;
      if (composeNofile === undefined) throw new Error('docker-compose.yml sets no nofile for web');
      nofile = Math.min(composeNofile, hardNofile());
      console.log(
        `nginx capacity: open-file limit ${nofile} (compose sets ${composeNofile}, this machine allows ${hardNofile()})`,
      );
      proxied = await startProxied(
        () => startTestChat({ trustProxy: 1, pollTimeoutMs: defaults.pollTimeoutMs }),
        (chat) => startNginx({ upstream: new URL(chat.url).host, root: '/nonexistent', nofile }),
      );
    });
    afterAll(() => proxied?.stop());

    it('leaves every client address within the chat’s MAX_POLLS_PER_ADDRESS default', () => {
      expect(Math.ceil(POLLS / CLIENTS)).toBeLessThanOrEqual(defaults.maxPollsPerAddress);
    });

    it('holds them all waiting in the chat, and one send through nginx answers every one', async () => {
      const { chat, nginx } = proxied;
      const started = Date.now();
      const polls: Promise<HttpAnswer>[] = [];
      for (let i = 0; i < POLLS; i += 1) {
        polls.push(
          http(`${nginx.url}/recv?room=crowd&since=0`, { localAddress: clientAddress(i) }),
        );
        if (polls.length % BATCH === 0 || polls.length === POLLS) {
          await waitingPolls(chat, polls.length, 10_000);
        }
      }
      const heldMs = Date.now() - started;

      const sentAt = Date.now();
      const sent = await postJson(`${nginx.url}/send`, { room: 'crowd', text: 'to everyone' });
      expect(sent.status).toBe(200);
      const { id } = sent.json<SendAnswer>();
      const answers = await Promise.all(polls);
      const answeredMs = Date.now() - sentAt;
      console.log(
        `nginx capacity: ${POLLS} polls waiting through nginx after ${heldMs} ms; one send answered all in ${answeredMs} ms`,
      );

      const outcomes = new Map<string, number>();
      for (const answer of answers) {
        const body = answer.status === 200 ? answer.json<RecvAnswer>() : undefined;
        const outcome =
          body?.cursor === id && body.messages.map((m) => m.text).join() === 'to everyone'
            ? 'the message'
            : `${answer.status} ${answer.text.slice(0, 80)}`;
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
      expect(Object.fromEntries(outcomes)).toEqual({ 'the message': POLLS });
      expect(chat.waiters.size).toBe(0);
      expect(await nginx.errorLog()).not.toMatch(
        /worker_connections are not enough|Too many open files|\[(alert|crit|emerg)\]/,
      );
    }, 60_000);
  },
);
