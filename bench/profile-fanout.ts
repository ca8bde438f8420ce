/**
 * `npx tsx bench/profile-fanout.ts [chat|bare|naive] [N,N,…] [--cpu-prof]`:
 * repeats T5 fan-outs against one server and prints, for each, the latency
 * and the server's CPU per poll and per delivery. With `--cpu-prof` the chat
 * writes a V8 profile to `bench/results/profiles/` (open it in Chrome
 * DevTools): how the hub and the routes were tuned.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { readCli, usageError } from '../scripts/cli.ts';
import { LoadGenerator } from './lib/load.ts';
import { bareHttpSpec, chatSpec, naiveSpec, startServer } from './lib/servers.ts';
import { fanout } from './scenarios/polls.ts';

const usage = {
  usage: `usage: npx tsx bench/profile-fanout.ts [chat|bare|naive] [N,N,…] [--cpu-prof]      (after npm run build)

Repeats T5 fan-outs against one server: latency and server CPU per poll and delivery.

  chat|bare|naive  which server (default chat)
  N,N,…            waiting clients of each fan-out (default 5000,5000,5000)
  --cpu-prof       the chat writes a V8 profile to bench/results/profiles/
  -h, --help       this help`,
  options: { 'cpu-prof': { type: 'boolean' } },
  positionals: { max: 2 },
} as const;
const cli = readCli(usage);
const [which = 'chat', sizes = '5000,5000,5000'] = cli.positionals;
const profile = cli.values['cpu-prof'] === true;
if (!['chat', 'bare', 'naive'].includes(which)) usageError(usage, `no server "${which}"`);
if (!/^[1-9]\d*(?:,[1-9]\d*)*$/.test(sizes))
  usageError(usage, `sizes must be N,N,…, got "${sizes}"`);
const sqliteFile = `/tmp/profile-fanout-${process.pid}.sqlite`;
const spec =
  which === 'bare'
    ? bareHttpSpec
    : which === 'naive'
      ? naiveSpec
      : chatSpec('chat', 'chat', {
          databaseUrl: `sqlite:/tmp/profile-fanout-${process.pid}.sqlite`,
        });
if (profile && which === 'chat') {
  const dir = join(import.meta.dirname, 'results', 'profiles');
  spec.argv = [spec.argv[0]!, '--cpu-prof', `--cpu-prof-dir=${dir}`, ...spec.argv.slice(1)];
}

const gen = new LoadGenerator();
const server = await startServer(spec);
try {
  for (const clients of sizes.split(',').map(Number)) {
    const row = await fanout(server, gen, clients);
    const { p50, p99, max } = row.latency;
    console.log(
      `N=${clients}: p50 ${p50} ms, p99 ${p99} ms, max ${max} ms; ${(row.bytesPerClient / 1024).toFixed(1)} KB/client (heap ${(row.heapBytesPerClient / 1024).toFixed(1)} KB); ` +
        `server CPU µs/client: poll ${row.serverCpuUs.perPoll}, delivery ${row.serverCpuUs.perDelivery}; generator CPU ${Math.round(row.generatorCpuShare * 100)}%`,
    );
  }
} finally {
  await server.stop();
  gen.close();
  for (const suffix of ['', '-wal', '-shm']) rmSync(sqliteFile + suffix, { force: true });
}
