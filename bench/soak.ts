/**
 * `npm run soak [-- --quick]`: the chat under a steady load for a bounded
 * time, to see what hours of traffic would do.
 *
 * - 2,000 clients long-poll, 100 to a room in 20 rooms, each with its cursor
 *   and its own `client` id (the online count).
 * - 10 messages a second are sent, each to a random room.
 * - A third of the clients come and go: each polls for 5-20 s, leaves (its
 *   poll aborted, as a closed tab does), stays away 1-10 s, and comes back
 *   with its cursor.
 * - 10 minutes by default; `--quick` is 1 minute (what CI runs);
 *   `--duration=SECONDS` and `--clients=N` for other runs.
 *
 * At the end it prints, and fails (exit 1) when one is missed:
 * - RSS growth after warm-up under 10%: the lowest RSS around the end of
 *   the warm-up (the first quarter of the run; half of a quick one) against
 *   the lowest over the last 15 s, both under load, each after a full GC.
 *   Under 25% in a quick run: over one minute those floors move by up to
 *   ±20% with nothing leaking (the number of connected clients and V8's
 *   page reuse vary), so 10% there failed one run in four;
 * - JS heap growth after warm-up under 10%, after a full GC at each end: the
 *   steady measure of a leak in the JavaScript heap, in both modes;
 * - the waiting count back to 0 once every client has left;
 * - no client lost, doubled or reordered a message: each must hold every id
 *   of its room, exactly once, in order (ids are dense per room) — for the
 *   clients that stayed, the criterion of the issue, and for those that came
 *   and went.
 *
 * The chat runs as built (`dist/server/main.js`, SQLite in a temporary
 * folder, with the bench-only `/bench/gc` route); the clients run in this process, one socket each: about 4,000
 * sockets on the machine, far below `ulimit -n` (raised as far as allowed).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Message, RecvAnswer } from '../protocol/protocol.ts';
import { readCli } from '../scripts/cli.ts';
import { type ChatClient, chatClient, gauge } from '../test/helpers/http-client.ts';
import { buildChat } from './lib/build.ts';
import { chatSpec, type RunningServer, startServer } from './lib/servers.ts';

const cli = readCli({
  usage: `usage: npm run soak [-- --quick] [-- --duration=SECONDS] [-- --clients=N]

Builds the chat (npm run build), then holds it under a steady load and fails
on growing memory or on a lost, doubled or reordered message.

  --quick            one minute instead of ten (what CI runs)
  --duration=S       run for S seconds (at least 10)
  --clients=N        long-polling clients (default 2000)
  -h, --help         this help`,
  options: {
    quick: { type: 'boolean' },
    duration: { type: 'string' },
    clients: { type: 'string' },
  },
});
const QUICK = cli.values.quick === true;
const DURATION_S = cli.integer('duration', QUICK ? 60 : 600, { min: 10 });
const CLIENTS = cli.integer('clients', 2_000, { min: 1 });
// After the flags: `--help` and a bad flag answer at once, before any build.
buildChat();
const ROOMS = 20;
const SENDS_PER_S = 10;
const POLL_TIMEOUT_MS = 25_000;
const WARM_UP_S = QUICK ? DURATION_S / 2 : DURATION_S / 4;
/** The RSS growth allowed (see above for why a quick run allows more). */
const RSS_LIMIT = QUICK ? 0.25 : 0.1;
const HEAP_LIMIT = 0.1;
/** How long the end may take: clients catch up, then leave. */
const SETTLE_MS = 30_000;

interface Client {
  id: string;
  room: string;
  /** Comes and goes (a third of the clients), or stays throughout. */
  roams: boolean;
  cursor: number;
  /** Every id received, in order. */
  received: number[];
  /** Ids that came out of order, twice, or after a gap. */
  faults: string[];
  /** Aborts the poll in flight (leaving, as a closed tab). */
  polling: AbortController | undefined;
  away: boolean;
  /**
   * Counts the visits: leaving ends one. A poll loop belongs to the visit that
   * started it, so a poll aborted by leaving can neither go on polling nor
   * count as a fault, whenever its error arrives (even after the client is
   * back, with a new loop).
   */
  visit: number;
  /** The timer that brings it back while it is away. */
  comeback: NodeJS.Timeout | undefined;
  stopped: boolean;
  nextLeave: number;
}

const rooms = Array.from({ length: ROOMS }, (_, i) => `soak-${i}`);
const random = (min: number, max: number) => min + Math.random() * (max - min);

/** The long-poll loop of one client's visit, until it leaves or the run ends. */
async function poll(http: ChatClient, client: Client): Promise<void> {
  const visit = client.visit;
  const current = () => client.visit === visit && !client.away && !client.stopped;
  while (current()) {
    try {
      client.polling = new AbortController();
      const answer = await http.get(
        `/recv?room=${client.room}&since=${client.cursor}&client=${client.id}`,
        client.polling.signal,
      );
      const { status } = answer;
      const body = answer.body as RecvAnswer;
      if (client.visit !== visit) break; // Answered after it left: the next visit polls anew.
      client.polling = undefined;
      if (status !== 200) {
        client.faults.push(`status ${status}`);
        continue;
      }
      if (body.reset) client.faults.push(`reset at ${client.cursor}`);
      for (const message of body.messages) {
        if (message.id !== client.cursor + 1) {
          client.faults.push(`got ${message.id} after ${client.cursor}`);
        }
        client.received.push(message.id);
        client.cursor = Math.max(client.cursor, message.id);
      }
    } catch (error) {
      // Aborted by leaving, or the end of the run: not a fault.
      if (!current()) break;
      client.polling = undefined;
      client.faults.push(`poll failed (${(error as Error).message})`);
    }
  }
}

/** Back from being away: polls again from its cursor (one poll loop per client, always). */
function comeBack(http: ChatClient, client: Client): void {
  clearTimeout(client.comeback);
  client.comeback = undefined;
  if (client.stopped || !client.away) return;
  client.away = false;
  client.nextLeave = Date.now() + random(5_000, 20_000);
  void poll(http, client);
}

/** Leaves (the poll aborted, as a closed tab) and comes back 1-10 s later with its cursor. */
function leave(http: ChatClient, client: Client): void {
  client.away = true;
  client.visit += 1;
  client.polling?.abort();
  client.polling = undefined;
  client.comeback = setTimeout(() => comeBack(http, client), random(1_000, 10_000));
  client.nextLeave = Number.POSITIVE_INFINITY;
}

/** A gauge of the chat's `/metrics`; NaN when absent. */
async function metric(http: ChatClient, name: string): Promise<number> {
  return (await gauge(http, name)) ?? Number.NaN;
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'chat-soak-'));
  const spec = chatSpec('chat', 'chat (soak)', {
    databaseUrl: `sqlite:${join(dir, 'soak.sqlite')}`,
    pollTimeoutMs: POLL_TIMEOUT_MS,
  });
  // Every client comes from 127.0.0.1: no per-address limits here.
  spec.env = {
    ...spec.env,
    MAX_POLLS_PER_ADDRESS: '0',
    MAX_POLLS_PER_CLIENT: '0',
    MAX_CONNECTIONS_PER_ADDRESS: '0',
    MAX_IDLE_PER_ADDRESS: '0',
    PRESENCE_CLIENTS_PER_ADDRESS: '0',
  };
  let server: RunningServer | undefined;
  let http: ChatClient | undefined;
  const failures: string[] = [];
  try {
    server = await startServer(spec);
    // One socket per client: no cap on connections.
    const chat = chatClient(`http://127.0.0.1:${server.port}`, {
      maxSockets: Number.POSITIVE_INFINITY,
    });
    http = chat;
    console.log(
      `soak: ${CLIENTS} clients in ${ROOMS} rooms, ${SENDS_PER_S} messages/s, ${DURATION_S} s (warm-up ${WARM_UP_S} s), open-file limit ${server.fileLimit}`,
    );

    // Each client starts at the head of its room, as a page that just opened.
    const start = Date.now();
    const clients: Client[] = Array.from({ length: CLIENTS }, (_, i) => ({
      id: `soak-client-${i.toString().padStart(5, '0')}`,
      room: rooms[i % ROOMS]!,
      roams: i % 3 === 0,
      cursor: 0,
      received: [],
      faults: [],
      polling: undefined,
      away: false,
      visit: 0,
      comeback: undefined,
      stopped: false,
      nextLeave: start + random(5_000, 20_000),
    }));
    for (const [i, client] of clients.entries()) {
      setTimeout(() => void poll(chat, client), (i / CLIENTS) * 2_000);
    }

    // The senders: 10 a second, each to a random room; the last acknowledged id per room.
    const lastId = new Map<string, number>();
    let sent = 0;
    let sendErrors = 0;
    let sending = 0;
    function sendOne(): void {
      const room = rooms[Math.floor(Math.random() * ROOMS)]!;
      sending += 1;
      chat
        .post('/send', { room, nickname: 'soak', text: `m${sent}` })
        .then(
          ({ status, body }) => {
            if (status !== 200) sendErrors += 1;
            else {
              const { id } = (body as { message: Message }).message;
              lastId.set(room, Math.max(lastId.get(room) ?? 0, id));
            }
          },
          () => {
            sendErrors += 1;
          },
        )
        .finally(() => {
          sending -= 1;
        });
      sent += 1;
    }
    // By the clock, not by the timer's count: a busy loop delays timers, and
    // the rate must stay 10 a second on average.
    const sender = setInterval(() => {
      const due = Math.floor(((Date.now() - start) / 1000) * SENDS_PER_S);
      while (sent < due) sendOne();
    }, 1_000 / SENDS_PER_S);

    // Churn and memory samples, once a second.
    const rss: { at: number; bytes: number }[] = [];
    const churn = setInterval(() => {
      const now = Date.now();
      rss.push({ at: (now - start) / 1000, bytes: server!.rssBytes() });
      for (const client of clients) {
        if (client.roams && !client.away && now >= client.nextLeave) leave(chat, client);
      }
    }, 1_000);
    const progress = setInterval(async () => {
      const waiting = await metric(chat, 'chat_polls_waiting').catch(() => NaN);
      const last = rss[rss.length - 1];
      console.log(
        `  ${Math.round((Date.now() - start) / 1000)} s: sent ${sent}, waiting ${waiting}, away ${clients.filter((c) => c.away).length}, RSS ${last ? mb(last.bytes) : '?'}`,
      );
    }, 10_000);

    // RSS between collections is a sawtooth (±20 MB here) that would drown
    // a trend in a short run: compare its floors, the lowest RSS over 15 s
    // around the end of the warm-up and over the last 15 s, each window
    // with a forced full GC in it.
    const floor = (from: number, to: number) =>
      Math.min(...rss.filter((s) => s.at >= from && s.at <= to).map((s) => s.bytes));
    await new Promise((resolve) => setTimeout(resolve, WARM_UP_S * 1_000));
    const heapAfterWarmUp = await server.collectGarbage();
    rss.push({ at: (Date.now() - start) / 1000, bytes: server.rssBytes() });
    await new Promise((resolve) => setTimeout(resolve, (DURATION_S - WARM_UP_S) * 1_000 - 5_000));
    const heapAtEnd = await server.collectGarbage();
    // As after the warm-up: a sample right after the full GC, or only the
    // first window would hold one, and the floors would not compare.
    rss.push({ at: (Date.now() - start) / 1000, bytes: server.rssBytes() });
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const rssAfterWarmUp = floor(WARM_UP_S - 10, WARM_UP_S + 5);
    const rssAtEnd = floor(DURATION_S - 15, DURATION_S);
    clearInterval(sender);
    clearInterval(churn);
    clearInterval(progress);

    // The end: everyone comes back and catches up with the last acknowledged message.
    for (const client of clients) {
      client.nextLeave = Number.POSITIVE_INFINITY;
      comeBack(chat, client);
    }
    const settleBy = Date.now() + SETTLE_MS;
    while (sending > 0 && Date.now() < settleBy) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const behind = () => clients.filter((c) => c.cursor < (lastId.get(c.room) ?? 0));
    while (behind().length > 0 && Date.now() < settleBy) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const stillBehind = behind().length;

    // Then everyone leaves: the server must let go of every waiting poll.
    const waitingBefore = await metric(chat, 'chat_polls_waiting');
    for (const client of clients) {
      client.stopped = true;
      client.polling?.abort();
    }
    const leftBy = Date.now() + 10_000;
    let waitingAfter = await metric(chat, 'chat_polls_waiting');
    while (waitingAfter > 0 && Date.now() < leftBy) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      waitingAfter = await metric(chat, 'chat_polls_waiting');
    }

    // Every client started at 0 in an empty room: it must hold every id of
    // its room, once, in order.
    const lost = (client: Client) => {
      const last = lastId.get(client.room) ?? 0;
      const want = Array.from({ length: last }, (_, i) => i + 1);
      return client.faults.length > 0 || client.received.join() !== want.join();
    };
    const stayers = clients.filter((c) => !c.roams);
    const roamers = clients.filter((c) => c.roams);
    const stayersLost = stayers.filter(lost).length;
    const roamersLost = roamers.filter(lost).length;
    const delivered = clients.reduce((sum, c) => sum + c.received.length, 0);

    const growth = (rssAtEnd - rssAfterWarmUp) / rssAfterWarmUp;
    const heapGrowth = (heapAtEnd - heapAfterWarmUp) / heapAfterWarmUp;
    const peak = Math.max(...rss.map((s) => s.bytes));

    console.log('\nsoak results');
    console.log(`  duration                 ${DURATION_S} s (warm-up ${WARM_UP_S} s)`);
    console.log(`  messages sent            ${sent} (${sendErrors} failed)`);
    console.log(`  messages delivered       ${delivered}`);
    console.log(
      `  RSS after warm-up        ${mb(rssAfterWarmUp)} (lowest of ${WARM_UP_S - 10}-${WARM_UP_S + 5} s)`,
    );
    console.log(
      `  RSS at the end           ${mb(rssAtEnd)} (lowest of the last 15 s; peak ${mb(peak)})`,
    );
    console.log(
      `  RSS growth               ${(growth * 100).toFixed(1)}% (limit ${RSS_LIMIT * 100}%)`,
    );
    console.log(
      `  JS heap after full GCs   ${mb(heapAfterWarmUp)} → ${mb(heapAtEnd)}: ${(heapGrowth * 100).toFixed(1)}% (limit ${HEAP_LIMIT * 100}%)`,
    );
    console.log(`  waiting with all in      ${waitingBefore}`);
    console.log(`  waiting after all left   ${waitingAfter}`);
    console.log(`  clients still behind     ${stillBehind}`);
    console.log(`  stayers with a loss      ${stayersLost} of ${stayers.length}`);
    console.log(`  comers-and-goers w/ loss ${roamersLost} of ${roamers.length}`);

    if (!(growth < RSS_LIMIT)) {
      failures.push(`RSS grew ${(growth * 100).toFixed(1)}% after warm-up`);
    }
    if (!(heapGrowth < HEAP_LIMIT)) {
      failures.push(`the JS heap grew ${(heapGrowth * 100).toFixed(1)}% after warm-up`);
    }
    if (waitingAfter !== 0)
      failures.push(`${waitingAfter} polls still waiting after every client left`);
    if (stayersLost > 0) failures.push(`${stayersLost} clients that stayed lost messages`);
    if (roamersLost > 0) failures.push(`${roamersLost} clients that came and went lost messages`);
    if (stillBehind > 0) failures.push(`${stillBehind} clients never caught up`);
    if (sendErrors > 0) failures.push(`${sendErrors} sends failed`);
    const faults = clients.flatMap((c) => c.faults.map((f) => `${c.id}: ${f}`));
    if (faults.length > 0) console.log(`  first faults: ${faults.slice(0, 5).join('; ')}`);
  } finally {
    http?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  if (failures.length > 0) {
    console.log(`\nFAIL: ${failures.join('; ')}`);
    process.exit(1);
  }
  console.log('\nPASS');
}

main().catch((error: unknown) => {
  process.stderr.write(`soak failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
