/**
 * Cluster mode without Redis: `WORKERS=2`, one port, the primary relaying
 * messages and presence between the workers over IPC.
 *
 * Each connection goes to one worker, so a pinned client (one keep-alive
 * connection) talks to one worker throughout: that is how these tests put
 * the waiting poll on one worker and the send on the other.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ChatClient,
  chatClient,
  pinnedToWorker,
  untilWaiting,
} from '../helpers/http-client.ts';
import type { ServerProcess } from '../helpers/processes.ts';
import { useChatProcesses } from './fixture.ts';

const POLL_TIMEOUT_MS = 10_000;

describe('cluster mode with 2 workers and no Redis', () => {
  const chat = useChatProcesses({
    workers: 2,
    env: { POLL_TIMEOUT_MS: String(POLL_TIMEOUT_MS) },
  });
  let server: ServerProcess;
  beforeAll(() => {
    server = chat.servers[0]!;
  });

  /** Pinned clients until one reaches a worker with the given pid (or another one, with `not`). */
  function clientOn(want: { pid?: number; not?: number }): Promise<[ChatClient, number]> {
    return pinnedToWorker(() => chat.client(server, { pinned: true, log: server }), want);
  }

  it('serves both workers through the one port', async () => {
    const [, first] = await clientOn({});
    const [, second] = await clientOn({ not: first });
    expect(new Set([first, second])).toEqual(new Set(server.listeningPids));
    const health = (await chat.clients[0]!.get('/health')).body;
    expect(health).toEqual({ status: 'ok' });
    const metrics = await chat.clients[0]!.text('/metrics');
    expect(metrics).toContain(`chat_info{store="${chat.database.kind}",bus="cluster"} 1`);
  });

  describe('when a poll waits on one worker and a message is sent to the other', () => {
    it('answers the poll with that message through the primary', async () => {
      const [waiter, waiterPid] = await clientOn({});
      const [sender] = await clientOn({ not: waiterPid });
      const poll = waiter.recv('room=relay&since=0');
      // The poll is registered once its worker counts it: ask that worker on another connection.
      await untilWaiting((await clientOn({ pid: waiterPid }))[0], 1);
      const start = performance.now();
      const sent = await sender.send({ room: 'relay', text: 'across workers' });
      const answer = await poll;
      console.log(
        `worker → primary → worker delivery: ${(performance.now() - start).toFixed(1)} ms`,
      );
      expect(answer.messages.map((m) => m.text)).toEqual(['across workers']);
      expect(answer.cursor).toBe(sent.id);
    });
  });

  describe('when clients poll the same room on different workers', () => {
    it('counts both online on each', async () => {
      const [onFirst, firstPid] = await clientOn({});
      const [onSecond] = await clientOn({ not: firstPid });
      await onFirst.send({ room: 'presence', text: 'hello' });
      const deadline = Date.now() + 10_000;
      for (;;) {
        const [one, two] = await Promise.all([
          onFirst.recv('room=presence&since=0&client=client-one'),
          onSecond.recv('room=presence&since=0&client=client-two'),
        ]);
        if (one.online === 2 && two.online === 2) break;
        expect(Date.now(), `online ${one.online} and ${two.online}`).toBeLessThan(deadline);
      }
    });
  });

  describe('when a send is retried with its key on the other worker', () => {
    it('stores it once', async () => {
      const [first, firstPid] = await clientOn({});
      const [second] = await clientOn({ not: firstPid });
      const fields = { room: 'retries', text: 'once', key: 'cluster-retry' };
      const [one, two] = await Promise.all([first.send(fields), second.send(fields)]);
      expect(two.id).toBe(one.id);
      const history = (await second.get('/history?room=retries')).body as { messages: unknown[] };
      expect(history.messages).toHaveLength(1);
    });
  });

  describe('when one worker gets SIGTERM while polls wait on it', () => {
    it('answers them empty at once, the clients miss nothing elsewhere, and the primary starts a new worker', async () => {
      const [sender] = await clientOn({});
      const before = await sender.send({ room: 'sigterm', text: 'before' });
      const [first, pid] = await clientOn({});
      const [second] = await clientOn({ pid });
      const [probe] = await clientOn({ pid });
      const polls = [first, second].map((c) => c.recv(`room=sigterm&since=${before.id}`));
      await untilWaiting(probe, 2);
      const restarted = server.nextLine(/worker (\d+): chat listening/);
      const start = performance.now();
      process.kill(pid, 'SIGTERM');
      const answers = await Promise.all(polls);
      expect(performance.now() - start).toBeLessThan(POLL_TIMEOUT_MS / 2);
      for (const answer of answers)
        expect(answer).toMatchObject({ messages: [], cursor: before.id });

      // The clients reconnect (anywhere) while messages keep coming.
      const after = chat.client(server);
      const repolls = answers.map((answer) => after.recv(`room=sigterm&since=${answer.cursor}`));
      const sent = [await after.send({ room: 'sigterm', text: 'after' })];
      for (const answer of await Promise.all(repolls)) {
        expect(answer.messages.map((m) => m.id)).toEqual(sent.map((s) => s.id));
      }

      const [, newPid] = await restarted;
      expect(Number(newPid)).not.toBe(pid);
    });
  });

  describe('when a worker is killed with SIGKILL', () => {
    it('is restarted by the primary', async () => {
      const [, pid] = await clientOn({});
      const restarted = server.nextLine(/worker (\d+): chat listening/);
      process.kill(pid, 'SIGKILL');
      const [, newPid] = await restarted;
      expect(Number(newPid)).not.toBe(pid);
      expect(server.output).toMatch(new RegExp(`worker ${pid} died \\(signal SIGKILL\\)`));
    });
  });

  describe('when PORT is a Unix socket path', () => {
    it('shares it between the workers like a TCP port', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'chat-pipe-'));
      const path = join(dir, 'chat.sock');
      const onPath = await chat.start({ port: path });
      expect(onPath.url).toBe(path);
      // New connections until both workers have answered one: the primary
      // deals them out in turn, but a worker busy starting (or a loaded
      // machine) may be passed over a few times.
      const pids = new Set<number>();
      const by = Date.now() + 10_000;
      while (pids.size < 2 && Date.now() < by) {
        const client = chatClient(path, { pinned: true, log: onPath });
        pids.add(await client.pid());
        client.close();
      }
      expect(pids).toEqual(new Set(onPath.listeningPids));
      await onPath.stop();
      expect((await onPath.exited).code).toBe(0);
      rmSync(dir, { recursive: true, force: true });
    });
  });

  describe('when the primary gets SIGTERM', () => {
    it('has every worker answer its waiting polls, and exits 0', async () => {
      const [first, firstPid] = await clientOn({});
      const [second] = await clientOn({ not: firstPid });
      const polls = [first, second].map((c) => c.recv('room=stop&since=0'));
      // Both polls, one on each worker (the count is the sum over the workers;
      // asked on a connection of its own, the pinned ones are busy polling).
      const probe = chat.client(server);
      await untilWaiting(probe, 2);
      server.signal('SIGTERM');
      for (const answer of await Promise.all(polls)) expect(answer.messages).toEqual([]);
      expect((await server.exited).code).toBe(0);
    });
  });
});
