/**
 * Typing in a big room (issue 21): N clients each hold a poll in one room
 * and poll again at once after each answer, as pages do; three people type,
 * each posting `POST /typing` every `everyMs` (more often than a page, which
 * posts at most every `limits.typingIntervalMs`). What it measures:
 * - the wakes: how many times each poll was woken for typing, and the gaps
 *   between two wakes of the same poll as the client saw them (the server
 *   promises at most one per `TYPING_WAKE_MS`, 2.5 s by default; a client
 *   that reads one answer late sees a shorter gap after it, so the median
 *   is the figure, the shortest one the worst jitter);
 * - their CPU cost: the server's CPU seconds over the window, less what the
 *   same window cost with the same polls and nobody typing, per wake and
 *   per answered poll.
 * Run by `npm run bench:typing` (bench/typing.ts).
 */

import type { RunningServer } from '../lib/servers.ts';
import { getRequest, type HttpConn, openMany, postForm } from '../load/http-conn.ts';

export interface TypingRun {
  clients: number;
  windowMs: number;
  typists: number;
  /** POST /typing sent in the window, over all typists. */
  posted: number;
  /** Wakes of the poll woken most often. */
  wakes: number;
  /** Gaps between two wakes of one poll, over all polls (ms); undefined with fewer than two. */
  medianGapMs: number | undefined;
  shortestGapMs: number | undefined;
  /** Polls answered `typingOnly`, and per wake. */
  answered: number;
  answeredPerWake: number;
  /** Server CPU over the window, and with nobody typing (s). */
  cpuSeconds: number;
  idleCpuSeconds: number;
  /** The typing's share: (cpu − idle) per wake (ms) and per answered poll (µs). */
  cpuMsPerWake: number;
  cpuUsPerAnswer: number;
}

const TYPING_ONLY = Buffer.from('"typingOnly":true');

export async function typingInBigRoom(
  server: RunningServer,
  options: { clients: number; windowMs: number; typists?: number; everyMs?: number },
): Promise<TypingRun> {
  const { clients, windowMs } = options;
  const typists = options.typists ?? 3;
  const everyMs = options.everyMs ?? 1_000;
  const room = `typing-${Math.random().toString(36).slice(2, 10)}`;
  const poll = getRequest(`/recv?room=${room}&since=0`);
  const conns = await openMany(clients, server.port);
  /** When each connection's typingOnly answers came (ms, performance.now()). */
  const arrivals = conns.map((): number[] => []);
  let counting = false;
  const keepPolling = (conn: HttpConn, index: number) => {
    conn.request(poll, (status, body) => {
      if (counting && status === 200 && body.includes(TYPING_ONLY)) {
        arrivals[index]!.push(performance.now());
      }
      keepPolling(conn, index);
    });
  };
  conns.forEach(keepPolling);
  await untilWaiting(server.port, clients);

  // The same window with nobody typing: what holding the polls costs by itself.
  const idleStart = server.cpuSeconds();
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  const idleCpuSeconds = server.cpuSeconds() - idleStart;

  const [typist] = await openMany(1, server.port, 1);
  let posted = 0;
  const post = (index: number) =>
    new Promise<void>((resolve, reject) => {
      const fields = { room, client: `bench-typist-${index}`, nickname: `Typist ${index}` };
      typist!.request(
        postForm('/typing', fields),
        (status) => {
          if (status !== 200) reject(new Error(`POST /typing answered ${status}`));
          posted += 1;
          resolve();
        },
        reject,
      );
    });
  const cpuStart = server.cpuSeconds();
  const started = performance.now();
  counting = true;
  let tick = 0;
  while (performance.now() - started < windowMs) {
    await post(tick % typists);
    tick += 1;
    await new Promise((resolve) => setTimeout(resolve, everyMs / typists));
  }
  const cpuSeconds = server.cpuSeconds() - cpuStart;
  counting = false;
  for (const conn of conns) conn.close();
  typist!.close();

  const gaps: number[] = [];
  let wakes = 0;
  let answered = 0;
  for (const times of arrivals) {
    wakes = Math.max(wakes, times.length);
    answered += times.length;
    for (let i = 1; i < times.length; i += 1) gaps.push(times[i]! - times[i - 1]!);
  }
  gaps.sort((a, b) => a - b);
  const extra = Math.max(0, cpuSeconds - idleCpuSeconds);
  return {
    clients,
    windowMs,
    typists,
    posted,
    wakes,
    medianGapMs: gaps.length > 0 ? Math.round(gaps[Math.floor(gaps.length / 2)]!) : undefined,
    shortestGapMs: gaps.length > 0 ? Math.round(gaps[0]!) : undefined,
    answered,
    answeredPerWake: wakes > 0 ? Math.round(answered / wakes) : 0,
    cpuSeconds: round3(cpuSeconds),
    idleCpuSeconds: round3(idleCpuSeconds),
    cpuMsPerWake: wakes > 0 ? round3((extra * 1_000) / wakes) : 0,
    cpuUsPerAnswer: answered > 0 ? round3((extra * 1e6) / answered) : 0,
  };
}

const round3 = (value: number) => Math.round(value * 1_000) / 1_000;

/** Until the server holds `count` polls (its bench-only `/bench/stats`). */
async function untilWaiting(port: number, count: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await fetch(`http://127.0.0.1:${port}/bench/stats`);
    const { waiting } = (await res.json()) as { waiting: number };
    if (waiting >= count) return;
    if (Date.now() > deadline) throw new Error(`only ${waiting} of ${count} polls waiting`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
