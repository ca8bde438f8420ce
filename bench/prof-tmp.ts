import { LoadGenerator } from './lib/load.ts';
import { bareHttpSpec, chatSpec, naiveSpec, startServer } from './lib/servers.ts';
import { fanout } from './tests/polls.ts';

const gen = new LoadGenerator();
const spec =
  process.argv[2] === 'bare'
    ? bareHttpSpec
    : process.argv[2] === 'naive'
      ? naiveSpec
      : chatSpec('chat', 'chat', { databaseUrl: 'sqlite:/dev/shm/prof-x.sqlite' });
if (process.argv[2] === 'prof')
  spec.argv = ['node', '--cpu-prof', '--cpu-prof-dir=/tmp/prof', 'dist/server/main.js'];
const server = await startServer(spec);
for (const n of (process.argv[3] ?? '5000,5000').split(',').map(Number)) {
  const r = await fanout(server, gen, n);
  console.log(
    n,
    JSON.stringify(r.latency),
    r.bytesPerClient,
    r.serverCpuUs,
    r.generatorCpuShare,
    r.armMs,
  );
}
await server.stop();
gen.close();
