/**
 * The load generator: a separate process from the server, so its CPU is
 * its own and is measured (`cpuShare`: the share of one core it used; on a
 * 2-core machine it competes with the server for the same cores).
 *
 * The parent (`bench/lib/load.ts`) forks it and sends one command at a time
 * over IPC; it answers with the command's result. Every connection is a raw
 * socket with a prebuilt request (`http-conn.ts`).
 */
import { performance } from 'node:perf_hooks';
import { getRequest, HttpConn, openMany, postForm } from './http-conn.ts';

export interface Target {
  port: number;
  /** Whether the server has `since` cursors (the naive chat has none). */
  cursors: boolean;
  /**
   * A route that tells how many polls the server holds, so the generator can
   * wait until it holds every one: `{"waiting":n,"pid":p}` per process
   * (the baselines' `/stats`, the chat's bench-only `/bench/stats`).
   */
  readyPath: string;
  /** Server processes to sum `waiting` over (cluster workers). */
  processes: number;
}

export interface FanoutCommand {
  kind: 'fanout';
  target: Target;
  room: string;
  clients: number;
  /** Send after this many ms instead of once the server holds every poll (T4). */
  fireAfterMs?: number;
  timeoutMs: number;
}

export interface FanoutResult {
  /** From the send to each client's complete answer (ms). */
  sinceSend: number[];
  /** From each client's request to its answer (ms). */
  sinceRequest: number[];
  answered: number;
  failed: number;
  /** ms from the first connection to the moment the server held every poll. */
  armMs: number;
  cpuShare: number;
}

/**
 * T6's workload: `subscribers` connections each poll with their cursor and
 * poll again as soon as an answer arrives; `senders` connections each send
 * their next numbered message once the previous one is acknowledged,
 * `messages` in all. Delivered messages/s count from the first send to the
 * last delivery; every subscriber checks it got each message once, in each
 * sender's order.
 */
export interface SustainedCommand {
  kind: 'sustained';
  target: Target;
  room: string;
  subscribers: number;
  senders: number;
  messages: number;
  /**
   * ms without any delivery, once every send is acknowledged, after which a
   * server without cursors is taken to have lost the rest. A server with
   * cursors gets 30 s: on a stalled CI machine a late message is not a lost one.
   */
  idleMs: number;
}

export interface SubscriberCount {
  received: number;
  lost: number;
  doubled: number;
  outOfOrder: number;
}

export interface SustainedResult {
  delivered: number;
  /** Poll answers that carried messages (from the first send on): deliveries ÷ answers = messages per answer. */
  answers: number;
  deliveredPerSec: number;
  sendsPerSec: number;
  sendErrors: number;
  elapsedMs: number;
  perSubscriber: SubscriberCount[];
  /**
   * The first few things that went wrong, in words (a send not answered
   * 200, a poll's error, a message seen twice): what a failed run says of
   * itself, since a figure alone does not tell a harness fault from the
   * server's.
   */
  incidents: string[];
  cpuShare: number;
}

export interface MixCommand {
  kind: 'mix';
  target: Target;
  durationMs: number;
  burnConns: number;
  timeConns: number;
}

export interface MixResult {
  timeLatencies: number[];
  timePerSec: number;
  burnPerSec: number;
  errors: number;
  cpuShare: number;
}

export type Command = FanoutCommand | SustainedCommand | MixCommand;

const now = () => performance.now();

/** Measures the generator's own CPU over `run`, as a share of one core. */
async function measured<T extends object>(
  run: () => Promise<T>,
): Promise<T & { cpuShare: number }> {
  const cpu = process.cpuUsage();
  const start = now();
  const result = await run();
  const used = process.cpuUsage(cpu);
  const wallUs = (now() - start) * 1000;
  return { ...result, cpuShare: Math.round(((used.user + used.system) / wallUs) * 1000) / 1000 };
}

/** Resolves once the server's processes together hold `count` waiting polls. */
async function armed(target: Target, count: number, timeoutMs: number): Promise<void> {
  const probe = getRequest(target.readyPath);
  const latest = new Map<number, number>();
  const deadline = now() + timeoutMs;
  while (now() < deadline) {
    // A new connection per probe: cluster workers take connections in turn.
    const conn = await HttpConn.open(target.port);
    const body = await new Promise<Buffer>((resolve, reject) =>
      conn.request(probe, (_s, b) => resolve(b), reject),
    );
    conn.close();
    const { waiting, pid } = JSON.parse(body.toString()) as { waiting: number; pid: number };
    latest.set(pid, waiting);
    let total = 0;
    for (const value of latest.values()) total += value;
    if (latest.size >= target.processes && total >= count) return;
    await new Promise((resolve) => setTimeout(resolve, latest.size < target.processes ? 5 : 50));
  }
  throw new Error(
    `the server did not hold ${count} polls within ${timeoutMs} ms (saw ${[...latest.values()]})`,
  );
}

function recvPath(target: Target, room: string, cursor: number): string {
  return target.cursors ? `/recv?room=${room}&since=${cursor}` : `/recv?room=${room}`;
}

async function fanout(command: FanoutCommand): Promise<Omit<FanoutResult, 'cpuShare'>> {
  const { target, clients, room } = command;
  // Clients poll from the room's head, as a chat page does after its first
  // answer: one message first, then every poll carries its id as the cursor.
  const head = await sendOne(target.port, room, 'head');
  const poll = getRequest(recvPath(target, room, head));
  const started = now();
  const conns = await openMany(clients, target.port);
  const sinceSend: number[] = [];
  const sinceRequest: number[] = [];
  let failed = 0;
  let sentAt = Number.POSITIVE_INFINITY;
  const done = new Promise<void>((resolve) => {
    let left = clients;
    const settle = () => {
      left -= 1;
      if (left === 0) resolve();
    };
    for (const conn of conns) {
      const requestedAt = now();
      conn.request(
        poll,
        (status) => {
          const at = now();
          if (status === 200) {
            sinceSend.push(at - sentAt);
            sinceRequest.push(at - requestedAt);
          } else failed += 1;
          // The sockets close once every answer is in: closing each at once
          // would make the server tear down connections while it still delivers.
          settle();
        },
        () => {
          failed += 1;
          settle();
        },
      );
    }
  });
  const written = now();
  let armMs = 0;
  if (command.fireAfterMs === undefined) {
    await armed(target, clients, command.timeoutMs);
    armMs = now() - started;
    // Let the parent read the server's memory while every poll waits, then fire.
    const fired = new Promise<void>((resolve) => {
      fire = resolve;
    });
    process.send!({ armed: true });
    await fired;
  } else {
    await new Promise((resolve) =>
      // The articles' 1-second handler: counted from the last request written.
      setTimeout(resolve, Math.max(0, written + command.fireAfterMs! - now())),
    );
  }
  const sender = await HttpConn.open(target.port);
  sentAt = now();
  sender.request(postForm('/send', { room, nickname: 'bench', text: 'fan-out' }), () =>
    sender.close(),
  );
  const timeout = new Promise<'timeout'>((resolve) =>
    setTimeout(resolve, command.timeoutMs, 'timeout').unref(),
  );
  await Promise.race([done, timeout]);
  for (const conn of conns) conn.close();
  const answered = sinceSend.length;
  return {
    sinceSend,
    sinceRequest,
    answered,
    failed: failed + (clients - answered - failed),
    armMs,
  };
}

/** Sends one message and resolves with its id (0 from a server that does not say). */
async function sendOne(port: number, room: string, text: string): Promise<number> {
  const conn = await HttpConn.open(port);
  const body = await new Promise<Buffer>((resolve, reject) =>
    conn.request(
      postForm('/send', { room, nickname: 'bench', text }),
      (_s, b) => resolve(b),
      reject,
    ),
  );
  conn.close();
  return (JSON.parse(body.toString()) as { id?: number }).id ?? 0;
}

async function sustained(command: SustainedCommand): Promise<Omit<SustainedResult, 'cpuShare'>> {
  const { target, room, messages, senders } = command;
  const subscribers = await openMany(command.subscribers, target.port);
  const counts = subscribers.map(() => ({
    seen: new Set<string>(),
    received: 0,
    outOfOrder: 0,
    last: new Array<number>(senders).fill(-1),
  }));
  let delivered = 0;
  let answers = 0;
  let lastDeliveryAt = 0;
  const incidents: string[] = [];
  const incident = (what: string) => {
    if (incidents.length < 10) incidents.push(what);
  };
  subscribers.forEach((conn, i) => {
    const count = counts[i]!;
    const poll = (cursor: number): void =>
      conn.request(
        getRequest(recvPath(target, room, cursor)),
        (status, body) => {
          if (status !== 200) {
            incident(`subscriber ${i}: a poll at ${cursor} got ${status}`);
            setTimeout(poll, 50, cursor);
            return;
          }
          onAnswer(cursor, body);
        },
        (error) => incident(`subscriber ${i}: its poll at ${cursor} failed: ${error.message}`),
      );
    const onAnswer = (cursor: number, body: Buffer): void => {
      const reply = JSON.parse(body.toString()) as {
        messages: { id: number; text: string }[];
        cursor?: number;
      };
      for (const { id, text } of reply.messages) {
        const [sender, k] = text.split(':').map(Number) as [number, number];
        count.received += 1;
        if (count.seen.has(text)) {
          incident(
            `subscriber ${i}: "${text}" (id ${id}) again, in an answer to a poll at ${cursor}`,
          );
        } else {
          count.seen.add(text);
          delivered += 1;
        }
        if (k < count.last[sender]!) count.outOfOrder += 1;
        else count.last[sender] = k;
      }
      if (reply.messages.length > 0) {
        answers += 1;
        lastDeliveryAt = now();
      }
      poll(reply.cursor ?? 0);
    };
    poll(0);
  });
  await armed(target, command.subscribers, 20_000);
  // The senders' connections are open before the clock starts: it counts from the first send.
  const senderConns = await openMany(senders, target.port);
  // Let the parent read the server's CPU now, then start.
  const fired = new Promise<void>((resolve) => {
    fire = resolve;
  });
  process.send!({ armed: true });
  await fired;

  const startedAt = now();
  let sendErrors = 0;
  let acked = 0;
  // Each sender sends its next numbered message only once the previous one is
  // acknowledged, as a person does: the acknowledgement's latency bounds the rate.
  await Promise.all(
    senderConns.map(async (conn, sender) => {
      for (let k = sender; k < messages; k += senders) {
        const raw = postForm('/send', {
          room,
          nickname: `sender${sender}`,
          text: `${sender}:${k}`,
        });
        const status = await new Promise<number>((resolve) =>
          conn.request(raw, resolve, (error) => {
            incident(`sender ${sender}: "${sender}:${k}" failed: ${error.message}`);
            resolve(0);
          }),
        );
        if (status === 200) acked += 1;
        else {
          sendErrors += 1;
          if (status !== 0) incident(`sender ${sender}: "${sender}:${k}" got ${status}`);
        }
      }
      conn.close();
    }),
  );
  const sentAt = now();
  // Wait for every delivery, or for the flow to stop (the naive chat loses messages).
  const expected = messages * subscribers.length;
  const idleMs = target.cursors ? 30_000 : command.idleMs;
  while (delivered < expected && now() - Math.max(lastDeliveryAt, sentAt) < idleMs) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  for (const conn of subscribers) conn.close();
  const elapsedMs = Math.max(lastDeliveryAt, sentAt) - startedAt;
  return {
    delivered,
    answers,
    deliveredPerSec: Math.round(delivered / (elapsedMs / 1000)),
    sendsPerSec: Math.round(acked / ((sentAt - startedAt) / 1000)),
    sendErrors,
    elapsedMs: Math.round(elapsedMs),
    perSubscriber: counts.map((c) => ({
      received: c.received,
      lost: messages - c.seen.size,
      doubled: c.received - c.seen.size,
      outOfOrder: c.outOfOrder,
    })),
    incidents,
  };
}

async function mix(command: MixCommand): Promise<Omit<MixResult, 'cpuShare'>> {
  const { target, durationMs } = command;
  const timeReq = getRequest('/time');
  const burnReq = getRequest('/burn');
  const timeLatencies: number[] = [];
  let burns = 0;
  let errors = 0;
  const start = now();
  const end = start + durationMs;
  const loop = async (raw: Buffer, onDone: (ms: number) => void) => {
    const conn = await HttpConn.open(target.port);
    while (now() < end) {
      const at = now();
      const status = await new Promise<number>((resolve) =>
        conn.request(raw, resolve, () => resolve(0)),
      );
      if (status === 200) onDone(now() - at);
      else {
        errors += 1;
        break;
      }
    }
    conn.close();
  };
  await Promise.all([
    ...Array.from({ length: command.burnConns }, () => loop(burnReq, () => (burns += 1))),
    ...Array.from({ length: command.timeConns }, () =>
      loop(timeReq, (ms) => timeLatencies.push(ms)),
    ),
  ]);
  const seconds = (now() - start) / 1000;
  return {
    timeLatencies,
    timePerSec: Math.round(timeLatencies.length / seconds),
    burnPerSec: Math.round((burns / seconds) * 10) / 10,
    errors,
  };
}

/** Set while a fan-out waits for the parent's go (after it has read the server's memory). */
let fire: (() => void) | undefined;

process.on('message', (command: Command | { kind: 'fire' }) => {
  if (command.kind === 'fire') {
    fire?.();
    fire = undefined;
    return;
  }
  const run =
    command.kind === 'fanout'
      ? () => fanout(command)
      : command.kind === 'sustained'
        ? () => sustained(command)
        : () => mix(command);
  measured(run as () => Promise<object>).then(
    (result) => process.send!({ ok: true, result }),
    (error: Error) => process.send!({ ok: false, error: error.stack ?? String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));
