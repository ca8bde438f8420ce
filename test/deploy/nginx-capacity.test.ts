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
import { defaults } from '../../server/core/config.ts';
import { startTestChat, type TestChat } from '../helpers/chat.ts';
import { hasCompose, MAIN_FILE, resolvedConfig } from './compose.ts';
import { hardNofile, hasNginx, startNginx } from './nginx.ts';
import {
  CLIENT_ADDRESSES,
  expectHoldsWaitingPolls,
  type Proxied,
  startProxied,
} from './nginx-fixtures.ts';

const POLLS = 5_000;
/**
 * Long enough that the first poll still waits when the last one is held on a
 * loaded machine, and below nginx's 65 s read timeout for /recv.
 */
const POLL_TIMEOUT_MS = 55_000;

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
        // The polls carry no client id (the 2011 client's shape), which an
        // address's share would hold to 10: the per-browser share is off.
        () =>
          startTestChat({ trustProxy: 1, pollTimeoutMs: POLL_TIMEOUT_MS, maxPollsPerClient: 0 }),
        (chat) => startNginx({ upstream: new URL(chat.url).host, root: '/nonexistent', nofile }),
      );
    });
    afterAll(() => proxied?.stop());

    it('leaves every client address within the chat’s MAX_POLLS_PER_ADDRESS default', () => {
      expect(Math.ceil(POLLS / CLIENT_ADDRESSES)).toBeLessThanOrEqual(defaults.maxPollsPerAddress);
    });

    it('holds them all waiting in the chat, and one send through nginx answers every one', async () => {
      const { heldMs, answeredMs } = await expectHoldsWaitingPolls(proxied, POLLS);
      console.log(
        `nginx capacity: ${POLLS} polls waiting through nginx after ${heldMs} ms; one send answered all in ${answeredMs} ms`,
      );
    }, 120_000);
  },
);
