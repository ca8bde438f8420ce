/**
 * The MongoDB store under faults, on a FerretDB of the test's own
 * (test/helpers/ferretdb.ts), so that stopping or freezing it disturbs no
 * one else:
 *
 * - the chat process killed (SIGKILL) during keyed sends: every
 *   acknowledged send is stored once, and the ids have no holes once the
 *   readers have settled the ids the dead process took and never filled;
 * - the server stopped and started again under a running chat: sends answer
 *   503 with Retry-After meanwhile, nothing acknowledged is lost, and the
 *   pool comes back by itself;
 * - the server frozen (SIGSTOP): its sockets stay open and nothing answers;
 *   sends answer 503 within STORE_TIMEOUT_MS, as for a hung SQLite file or a
 *   hung Redis, and the chat recovers once it answers again.
 */
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatClientOptions } from '../../server/store/mongodb/client.ts';
import { MESSAGES, type MessageDoc } from '../../server/store/mongodb/schema.ts';
import { MongoStore } from '../../server/store/mongodb/store.ts';
import { defaultTiming, type MongoTiming } from '../../server/store/mongodb/timing.ts';
import { startTestChat, type TestChat } from '../helpers/chat.ts';
import { type FerretDb, ferretdbNeed, startFerretDb } from '../helpers/ferretdb.ts';
import { describeWith } from '../helpers/needs.ts';
import { type ServerProcess, startServerProcess } from '../helpers/processes.ts';
import { until } from '../helpers/wait.ts';
import { type CapturedLog, captureLog } from '../ops/log-capture.ts';

const room = 'main';
/** Room for a loaded machine on top of STORE_TIMEOUT_MS. */
const MARGIN_MS = 1_000;

/**
 * A reader whose grace is short: it settles the ids a killed process took
 * within seconds. Sound here because that writer is dead (it can insert
 * nothing late); the arithmetic still holds for the shorter times.
 */
const quickReader: MongoTiming = {
  serverSelectionTimeoutMS: 300,
  waitQueueTimeoutMS: 300,
  connectTimeoutMS: 300,
  socketTimeoutMS: 1_000,
  sendByMs: 300,
  insertMaxTimeMs: 300,
  deliveryMs: 300,
  clockSkewMs: 100,
  operationMaxTimeMs: 1_000,
  graceMs: 2_600,
};

interface Sent {
  key: string;
  text: string;
  status: number;
  id?: number;
}

/** Every document of the room, messages and voids, by id. */
async function documents(url: string, dbName: string): Promise<MessageDoc[]> {
  const client = new MongoClient(url, chatClientOptions());
  try {
    return (await client
      .db(dbName)
      .collection<MessageDoc>(MESSAGES)
      .find({ room }, { projection: { _id: 0 } })
      .sort({ id: 1 })
      .toArray()) as MessageDoc[];
  } finally {
    await client.close();
  }
}

describeWith(ferretdbNeed(), 'MongoDB store under faults (a FerretDB of its own)', () => {
  let ferret: FerretDb;

  beforeAll(async () => {
    ferret = await startFerretDb();
  });

  afterAll(async () => {
    await ferret?.close();
  });

  describe('the chat process killed (SIGKILL) during keyed sends', () => {
    const dbName = 'chat_kill';
    let chat: ServerProcess | undefined;

    afterAll(async () => {
      await chat?.kill();
    });

    it('stores every acknowledged send once, and its ids have no holes once settled', async () => {
      expect(quickReader.socketTimeoutMS).toBeLessThan(defaultTiming.socketTimeoutMS);
      const env = { DATABASE_URL: `${ferret.url}${dbName}` };
      chat = await startServerProcess({ env });
      const port = chat.port!;
      let restarted: Promise<void> = Promise.resolve();
      let running = true;
      const acknowledged = new Map<string, { id: number; text: string }>();
      let failures = 0;
      let onAcknowledged: (() => void) | undefined;

      /** One keyed send, retried with its key until acknowledged, as the page does. */
      const sendUntilStored = async (text: string) => {
        const key = randomUUID();
        for (;;) {
          try {
            const res = await fetch(`http://127.0.0.1:${port}/send`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ room, nickname: 'Ann', text, key }),
            });
            const body = (await res.json()) as { message?: { id: number; text: string } };
            if (res.status === 200 && body.message) {
              acknowledged.set(key, { id: body.message.id, text: body.message.text });
              onAcknowledged?.();
              return;
            }
          } catch {
            // The process is gone: retry once it is back.
          }
          failures += 1;
          await restarted;
        }
      };
      const sender = async (n: number) => {
        for (let i = 0; running; i += 1) await sendUntilStored(`${n}.${i}`);
      };
      const acknowledgedAtLeast = (count: number) =>
        new Promise<void>((resolve) => {
          if (acknowledged.size >= count) return resolve();
          onAcknowledged = () => {
            if (acknowledged.size < count) return;
            onAcknowledged = undefined;
            resolve();
          };
        });

      const senders = Array.from({ length: 8 }, (_, n) => sender(n));
      for (let kill = 1; kill <= 2; kill += 1) {
        await acknowledgedAtLeast(40 * kill);
        let back!: () => void;
        restarted = new Promise((resolve) => {
          back = resolve;
        });
        await chat.kill();
        chat = await startServerProcess({ env, port });
        back();
      }
      await acknowledgedAtLeast(120);
      running = false;
      await Promise.all(senders);
      expect(failures).toBeGreaterThan(0);

      // Each acknowledged send is stored once, with the id and text it was acknowledged with.
      const docs = await documents(ferret.url, dbName);
      const messages = docs.filter((d) => !d.void);
      const byKey = new Map(messages.map((d) => [d.key, d]));
      expect(byKey.size).toBe(messages.length);
      for (const [key, ack] of acknowledged) {
        expect(byKey.get(key)).toMatchObject({ id: ack.id, text: ack.text });
      }

      const present = new Set(docs.map((d) => d.id));
      const head = Math.max(...present);
      const holes = Array.from({ length: head }, (_, i) => i + 1).filter((id) => !present.has(id));
      console.info(
        `SIGKILL x2: ${acknowledged.size} sends acknowledged, ${failures} attempts failed and were retried, ` +
          `${holes.length} ids left without a document, ${docs.length - messages.length} voids`,
      );

      // Ids the dead processes took and never filled are holes until a reader
      // claims them; then every id up to the head is a message or a void.
      const reader = new MongoStore(new MongoClient(ferret.url, chatClientOptions(quickReader)), {
        dbName,
        timing: quickReader,
      });
      try {
        await until(
          async () => (await reader.read(room, 0, 100_000)).end === 'head',
          'the readers to settle the ids the killed processes left',
          quickReader.graceMs * 3,
          100,
        );
      } finally {
        await reader.close();
      }
      const settled = (await documents(ferret.url, dbName)).map((d) => d.id);
      expect(settled).toEqual(settled.map((_, i) => i + 1));
    }, 120_000);
  });

  describe('the server stopped, then started again, under a running chat', () => {
    const dbName = 'chat_restart';
    let chat: TestChat;
    const sent: Sent[] = [];
    // What the chat logged: an answer other than the one expected says why.
    const logged: CapturedLog = captureLog('warn');
    const errorsLogged = () =>
      logged.lines
        .filter((line) => line.level === 'error')
        .map((line) => JSON.stringify(line).slice(0, 2_000))
        .join('\n');

    const send = async (key: string, text: string) => {
      const res = await chat.post('/send', { key, text, nickname: 'Ann', room });
      const body = (await res.clone().json()) as { message?: { id: number } };
      sent.push({ key, text, status: res.status, id: body.message?.id });
      return res;
    };

    beforeAll(async () => {
      const store = new MongoStore(new MongoClient(ferret.url, chatClientOptions()), { dbName });
      chat = await startTestChat(
        { pollTimeoutMs: 1_000, storeTimeoutMs: 2_000 },
        { store, log: logged.log },
      );
    });

    afterAll(async () => {
      await chat?.close();
    });

    it('answers 503 with Retry-After while it is away, loses nothing, and comes back by itself', async () => {
      for (let i = 0; i < 3; i++)
        expect((await send(`before-${i}`, `before ${i}`)).status).toBe(200);

      await ferret.stop();
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        const res = await send(`during-${i}`, `during ${i}`);
        expect(performance.now() - started).toBeLessThan(2_000 + MARGIN_MS);
        const answer = await res.text();
        expect(res.status, `stopped ${i}: ${answer}\n${errorsLogged()}`).toBe(503);
        expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      }
      const health = await chat.get('/health');
      expect(health.status).toBe(503);

      await ferret.start();
      // No restart of the chat: the pool finds the server again by itself.
      await until(
        async () => (await send(`after-${sent.length}`, 'after')).status === 200,
        'a send to succeed after the server came back',
        10_000,
        200,
      );
      for (const refused of sent.filter((s) => s.status !== 200)) {
        if (refused.key.startsWith('after-')) continue;
        expect((await send(refused.key, refused.text)).status).toBe(200);
      }

      const docs = (await documents(ferret.url, dbName)).filter((d) => !d.void);
      const byKey = new Map(docs.map((d) => [d.key, d]));
      expect(byKey.size).toBe(docs.length);
      for (const ack of sent.filter((s) => s.status === 200)) {
        expect(byKey.get(ack.key)).toMatchObject({ id: ack.id, text: ack.text });
      }
      for (const key of ['before-0', 'during-0', 'during-1', 'during-2'])
        expect(byKey.has(key)).toBe(true);
    }, 60_000);
  });

  describe('the server frozen (SIGSTOP)', () => {
    const dbName = 'chat_frozen';
    const STORE_TIMEOUT_MS = 1_000;
    let chat: TestChat;

    beforeAll(async () => {
      const store = new MongoStore(new MongoClient(ferret.url, chatClientOptions()), { dbName });
      chat = await startTestChat(
        { pollTimeoutMs: 1_000, storeTimeoutMs: STORE_TIMEOUT_MS },
        { store },
      );
    });

    afterAll(async () => {
      ferret.thaw();
      await chat?.close();
    });

    it('counts it as down within STORE_TIMEOUT_MS, and recovers once it answers', async () => {
      expect(
        (await chat.post('/send', { room, nickname: 'Ann', text: 'before', key: 'k0' })).status,
      ).toBe(200);

      await ferret.freeze();
      const refused: string[] = [];
      for (let i = 1; i <= 3; i++) {
        const started = performance.now();
        const res = await chat.post('/send', {
          room,
          nickname: 'Ann',
          text: `frozen ${i}`,
          key: `k${i}`,
        });
        expect(performance.now() - started).toBeLessThan(STORE_TIMEOUT_MS + MARGIN_MS);
        const answer = await res.text();
        expect(res.status, `frozen ${i}: ${answer}`).toBe(503);
        expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
        refused.push(`k${i}`);
      }
      const started = performance.now();
      const health = await chat.get('/health');
      expect(performance.now() - started).toBeLessThan(STORE_TIMEOUT_MS + MARGIN_MS);
      expect(health.status).toBe(503);

      ferret.thaw();
      // A refused send may still have landed once the server ran again; a
      // retry with its key finds it, or stores it, once either way. The
      // retries are what end the outage /health reports (a write that
      // succeeds), so they come first: on a loaded machine the late writes
      // may have been given up on, and /health then waits for a new one.
      for (const [i, key] of refused.entries()) {
        await until(
          async () =>
            (await chat.post('/send', { room, nickname: 'Ann', text: `frozen ${i + 1}`, key }))
              .status === 200,
          `the retry of ${key} to be stored after the thaw`,
          15_000,
          200,
        );
      }
      await until(
        async () => (await chat.get('/health')).status === 200,
        '/health to answer 200 once writes succeed again',
        5_000,
        100,
      );
      const docs = (await documents(ferret.url, dbName)).filter((d) => !d.void);
      expect(docs.map((d) => d.key).sort()).toEqual(['k0', 'k1', 'k2', 'k3']);
    }, 60_000);
  });
});
