/**
 * Redis hangs (SIGSTOP: its connections stay open and nothing answers)
 * under two server processes that share one database. A silent Redis must
 * count as down, as a dead one does: the bus is down (`chat_bus_up` 0), the
 * store watch carries messages between the servers, and sends are not slowed
 * by the shared send limit waiting on Redis.
 *
 * The Redis is a private one (test/cluster/fixture.ts): the shared one is
 * never stopped.
 */
import { expect, it } from 'vitest';
import { gauge, untilGauge, untilWaiting } from '../helpers/http-client.ts';
import { describeWith, needs } from '../helpers/needs.ts';
import { useChatProcesses } from './fixture.ts';

/** Long: an answer before it is a delivery, not the timeout's empty answer. */
const POLL_TIMEOUT_MS = 20_000;
const REDIS_TIMEOUT_MS = 500;
const room = 'hang';

describeWith(
  needs.command('redis-server'),
  'when Redis hangs under two servers on one database',
  () => {
    const chat = useChatProcesses({
      processes: 2,
      redis: 'private',
      env: {
        POLL_TIMEOUT_MS: String(POLL_TIMEOUT_MS),
        REDIS_TIMEOUT_MS: String(REDIS_TIMEOUT_MS),
        // On, and counted in Redis, but never reached here.
        SEND_RATE: '1000',
        SEND_BURST: '1000',
      },
    });
    const a = () => chat.clients[0]!;
    const b = () => chat.clients[1]!;
    /** The id of the last message sent: the head of the room. */
    let head = 0;
    const send = async (text: string) => {
      const sent = await a().send({ room, text });
      head = sent.id;
      return sent;
    };
    const busUp = async () => Promise.all([gauge(a(), 'chat_bus_up'), gauge(b(), 'chat_bus_up')]);

    it('delivers through Redis while it answers', async () => {
      expect(await busUp()).toEqual([1, 1]);
      const poll = b().recv(`room=${room}&since=0`);
      await untilWaiting(b(), 1);
      await send('before the hang');
      expect((await poll).messages.map((m) => m.text)).toEqual(['before the hang']);
    });

    it('counts the silent bus as down, delivers through the store within 3 s, and sends at full speed', async () => {
      const poll = b().recv(`room=${room}&since=${head}`);
      await untilWaiting(b(), 1);
      chat.redis!.pause();

      const sendStarted = performance.now();
      const sent = await send('during the hang');
      const firstSendMs = performance.now() - sendStarted;
      const answer = await poll;
      const deliveryMs = performance.now() - sendStarted;
      expect(answer.messages.map((m) => m.id)).toEqual([sent.id]);
      console.log(
        `Redis stopped: first send ${firstSendMs.toFixed(0)} ms, delivered on the other server ${deliveryMs.toFixed(0)} ms after it was sent`,
      );
      expect(deliveryMs).toBeLessThan(3_000);

      await Promise.all([a(), b()].map((c) => untilGauge(c, 'chat_bus_up', (up) => up === 0)));
      expect(await busUp()).toEqual([0, 0]);
      const health = await a().get('/health');
      expect({ status: health.status, body: health.body }).toEqual({
        status: 200,
        body: { status: 'degraded' },
      });

      // The send limit counts in this process now, at once: no send waits out
      // the Redis deadline.
      const sendMs: number[] = [];
      for (let n = 1; n <= 5; n += 1) {
        const started = performance.now();
        await send(`fast ${n}`);
        sendMs.push(performance.now() - started);
      }
      console.log(
        `sends while Redis is stopped (ms): ${sendMs.map((ms) => ms.toFixed(0)).join(', ')}; the Redis deadline is ${REDIS_TIMEOUT_MS} ms`,
      );
      expect(Math.max(...sendMs)).toBeLessThan(REDIS_TIMEOUT_MS * 0.8);
      // The first send may have met a bus not yet known to be down, but no more than one deadline.
      expect(firstSendMs).toBeLessThan(REDIS_TIMEOUT_MS + 1_000);

      // Once the hang is known, delivery is the store watch's: within STORE_POLL_MS (1 s).
      const delivery: number[] = [];
      for (let n = 1; n <= 3; n += 1) {
        const next = b().recv(`room=${room}&since=${head}`);
        await untilWaiting(b(), 1);
        const started = performance.now();
        const sentNow = await send(`during the hang, ${n}`);
        expect((await next).messages.map((m) => m.id)).toEqual([sentNow.id]);
        delivery.push(performance.now() - started);
      }
      console.log(
        `delivery A → B while Redis is known to be stopped (ms): ${delivery.map((ms) => ms.toFixed(0)).join(', ')}`,
      );
      expect(Math.max(...delivery)).toBeLessThan(3_000);
    });

    it('comes back up once Redis answers again', async () => {
      chat.redis!.resume();
      await Promise.all([a(), b()].map((c) => untilGauge(c, 'chat_bus_up', (up) => up === 1)));
      expect((await a().get('/health')).body).toEqual({ status: 'ok' });
      const poll = b().recv(`room=${room}&since=${head}`);
      await untilWaiting(b(), 1);
      const sent = await send('after the hang');
      expect((await poll).messages.map((m) => m.id)).toEqual([sent.id]);
      // The shared online count works again: each server counts the other's client.
      await expect
        .poll(
          async () => {
            const [onA, onB] = await Promise.all([
              a().recv(`room=${room}&since=0&client=client-on-a`),
              b().recv(`room=${room}&since=0&client=client-on-b`),
            ]);
            return [onA.online, onB.online];
          },
          { timeout: 10_000, interval: 100 },
        )
        .toEqual([2, 2]);
    });
  },
);
