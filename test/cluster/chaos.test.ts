/**
 * The chaos test: 3 server processes share one database and one Redis;
 * 20 clients poll with cursors and move to a random process before every
 * poll; 3 senders send 1,000 numbered messages across 2 rooms, retrying with
 * their idempotency key when a send fails; in the middle of the run one
 * process is killed with SIGKILL and started again on its port.
 *
 * Every client must end with every message of its room exactly once, in
 * order: the store's full list, read at the end.
 */
import { randomInt } from 'node:crypto';
import { expect, it } from 'vitest';
import { openStore } from '../../server/store/open-store.ts';
import type { Message } from '../../server/store/store.ts';
import type { RecvBody } from '../helpers/chat.ts';
import type { ChatClient } from '../helpers/http-client.ts';
import { describeWith, needs } from '../helpers/needs.ts';
import type { ServerProcess } from '../helpers/processes.ts';
import { useChatProcesses } from './fixture.ts';

const ROOMS = ['chaos-a', 'chaos-b'];
const CLIENTS = 20;
const SENDERS = 3;
const MESSAGES = 1_000;
const KILL_AFTER = 300;

interface Client {
  room: string;
  received: Message[];
  /** Answers whose first message was not the one right after the cursor. */
  outOfOrder: number;
  failedPolls: number;
  cursor: number;
  inFlight: AbortController | undefined;
}

describeWith(
  needs.service('REDIS_URL'),
  'chaos: 3 processes, moving clients, a SIGKILL mid-run',
  () => {
    const chat = useChatProcesses({
      processes: 3,
      redis: 'shared',
      env: { POLL_TIMEOUT_MS: '5000' },
    });
    const servers = chat.servers;

    it('gives every client every message of its room exactly once, in order', async () => {
      const started = performance.now();
      const pick = () => servers[randomInt(servers.length)]!;
      // One keep-alive client per address, node:http under it (lighter than
      // fetch): a restarted process is on the same address, and a connection
      // to the killed one fails like any other request to it.
      const byUrl = new Map<string, ChatClient>();
      const via = (server: ServerProcess): ChatClient => {
        let http = byUrl.get(server.url);
        if (!http) {
          http = chat.client(server);
          byUrl.set(server.url, http);
        }
        return http;
      };
      const clients: Client[] = Array.from({ length: CLIENTS }, (_, i) => ({
        room: ROOMS[i % ROOMS.length]!,
        received: [],
        outOfOrder: 0,
        failedPolls: 0,
        cursor: 0,
        inFlight: undefined,
      }));
      /** The last id of each room, known once every send is done. */
      const targets = new Map<string, number>();
      let sent = 0;
      let failedSends = 0;
      let killed: Promise<void> | undefined;
      let restart = 'no restart';

      async function runClient(client: Client, index: number): Promise<void> {
        const id = `chaos-client-${index}`;
        while (!(client.cursor >= (targets.get(client.room) ?? Number.POSITIVE_INFINITY))) {
          client.inFlight = new AbortController();
          const query = `room=${client.room}&since=${client.cursor}&client=${id}`;
          let answer: RecvBody;
          try {
            const res = await via(pick()).get(`/recv?${query}`, client.inFlight.signal);
            if (res.status !== 200) throw new Error(`status ${res.status}`);
            answer = res.body as RecvBody;
          } catch (error) {
            if (client.inFlight.signal.aborted) return;
            client.failedPolls += 1; // The killed process: poll another one.
            void error;
            continue;
          }
          const first = answer.messages[0];
          if (first && first.id !== client.cursor + 1) client.outOfOrder += 1;
          client.received.push(...answer.messages);
          client.cursor = answer.cursor;
        }
      }

      async function send(n: number, sender: number): Promise<void> {
        const body = {
          room: ROOMS[n % ROOMS.length],
          nickname: `sender-${sender}`,
          text: `message ${n}`,
          key: `chaos-${n}`,
        };
        // Retry with the same key until acknowledged: a send the killed process
        // stored but never answered is found by its key, not stored twice.
        for (;;) {
          try {
            const res = await via(pick()).post('/send', body);
            if (res.status === 200) break;
          } catch {}
          failedSends += 1;
        }
        sent += 1;
        if (sent === KILL_AFTER) killed = killAndRestart(randomInt(servers.length));
      }

      async function runSender(sender: number): Promise<void> {
        for (let n = sender; n < MESSAGES; n += SENDERS) await send(n, sender);
      }

      async function killAndRestart(index: number): Promise<void> {
        const victim = servers[index]!;
        await victim.kill();
        const down = performance.now();
        servers[index] = await chat.start({ port: victim.port! });
        restart = `process ${index} SIGKILLed at send ${KILL_AFTER}, back ${((performance.now() - down) / 1000).toFixed(1)} s later, at send ${sent}`;
      }

      const clientRuns = clients.map(runClient);
      await Promise.all(Array.from({ length: SENDERS }, (_, s) => runSender(s)));
      await killed;

      // Every send is acknowledged: the store's full list is final.
      const store = await openStore(chat.database.url);
      await store.init();
      const stored = new Map<string, Message[]>();
      try {
        for (const room of ROOMS) {
          const messages: Message[] = [];
          for (let page = await store.after(room, 0, 100); page.length > 0; ) {
            messages.push(...page);
            page = await store.after(room, page.at(-1)!.id, 100);
          }
          stored.set(room, messages);
          targets.set(room, messages.at(-1)?.id ?? 0);
        }
      } finally {
        await store.close();
      }
      // Clients already at the end are waiting for a message that will not come.
      for (const client of clients) {
        if (client.cursor >= targets.get(client.room)!) client.inFlight?.abort();
      }
      await Promise.all(clientRuns);
      const seconds = (performance.now() - started) / 1000;

      const counts = ROOMS.map((room) => `${room}: ${stored.get(room)!.length}`).join(', ');
      console.log(
        `chaos: ${sent} sends acknowledged (${failedSends} retried) in ${seconds.toFixed(1)} s; ` +
          `stored ${counts}; clients received ${clients.map((c) => c.received.length).join(' ')}; ` +
          `polls that failed on the killed process: ${clients.reduce((n, c) => n + c.failedPolls, 0)}; ${restart}`,
      );

      // The store holds each numbered message exactly once (retries included).
      const texts = [...stored.values()].flat().map((m) => m.text);
      expect(texts).toHaveLength(MESSAGES);
      expect(new Set(texts).size).toBe(MESSAGES);
      for (const [room, messages] of stored) {
        expect(messages.map((m) => m.id)).toEqual(messages.map((_, i) => i + 1));
        expect(messages.every((m) => m.room === room)).toBe(true);
      }
      // Each client has its room's list exactly: every message once, in order.
      for (const client of clients) {
        const room = stored.get(client.room)!;
        expect(client.outOfOrder).toBe(0);
        expect(client.received.map((m) => m.id)).toEqual(room.map((m) => m.id));
        // And each exactly as stored: whichever process and path it came by,
        // a message reads the same (docs/design.md, "The HTTP contract": a Message is exactly what every route returns).
        const differs = client.received.findIndex((m, i) => !sameMessage(m, room[i]!));
        expect(
          differs === -1
            ? undefined
            : { received: client.received[differs], stored: room[differs] },
        ).toBeUndefined();
      }
    }, 90_000);
  },
);

function sameMessage(a: Message, b: Message): boolean {
  return (
    a.id === b.id &&
    a.room === b.room &&
    a.nickname === b.nickname &&
    a.text === b.text &&
    a.time === b.time
  );
}
