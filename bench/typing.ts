/**
 * `npm run bench:typing [-- --clients=10000 --window=15]`: three people
 * typing in a room of N waiting polls (bench/scenarios/typing.ts). Prints the
 * wakes (at most one per 2.5 s expected), the gaps between two wakes of a
 * poll, and their CPU cost; exits 1 when the median gap is under 2 s. The
 * chat runs from the build (`dist/`, built first) with the in-memory store;
 * traffic stays on 127.0.0.1.
 */
import { readCli } from '../scripts/cli.ts';
import { buildChat } from './lib/build.ts';
import { chatSpec, startServer } from './lib/servers.ts';
import { typingInBigRoom } from './scenarios/typing.ts';

const cli = readCli({
  usage: `usage: npm run bench:typing [-- --clients=N] [-- --window=SECONDS]

Builds the chat (npm run build), then measures three people typing in a
room of N waiting polls: the wakes, the gaps between two wakes of a poll,
and their CPU cost. Exits 1 when the median gap is under 2 s.

  --clients=N        waiting polls in the room (default 10000)
  --window=S         how long the three type, in seconds (default 15)
  -h, --help         this help`,
  options: {
    clients: { type: 'string' },
    window: { type: 'string' },
  },
});
const clients = cli.integer('clients', 10_000, { min: 1 });
const windowMs = cli.integer('window', 15, { min: 1 }) * 1_000;
buildChat();

const spec = chatSpec('chat', 'chat (memory store)', { databaseUrl: 'memory:' });
const server = await startServer({ ...spec, env: { ...spec.env, TYPING_RATE: '0' } });
try {
  const run = await typingInBigRoom(server, { clients, windowMs });
  console.log(JSON.stringify(run, null, 2));
  console.log(
    `${run.typists} typing among ${run.clients} waiting polls for ${run.windowMs / 1000} s: ` +
      `${run.posted} POST /typing, ${run.wakes} wakes (gap median ${run.medianGapMs ?? '–'} ms, ` +
      `shortest ${run.shortestGapMs ?? '–'} ms as the clients read them), ` +
      `${run.answeredPerWake} polls answered per wake; server CPU ${run.cpuSeconds} s ` +
      `(${run.idleCpuSeconds} s with nobody typing): ${run.cpuMsPerWake} ms per wake, ` +
      `${run.cpuUsPerAnswer} µs per answered poll`,
  );
  if (run.medianGapMs !== undefined && run.medianGapMs < 2_000) process.exitCode = 1;
} finally {
  await server.stop();
}
