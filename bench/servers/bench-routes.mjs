/**
 * Two bench-only routes, preloaded into every server under test
 * (`node --expose-gc --import ./bench/servers/bench-routes.mjs …`), so the
 * product has no such routes. Cluster workers inherit `--import`.
 *
 * - `GET /burn`: answers after about 50 ms of pure CPU, the articles'
 *   "CPU-bound handler" (T7).
 * - `GET /bench/gc`: runs a full garbage collection, so T5 reads the memory
 *   the waiting polls hold, not garbage a lazy collector has not freed yet
 *   (up to a young generation's worth: several KB per client at N=10,000).
 *
 * And, under `--cpu-prof` only: SIGTERM exits normally in a server that does
 * not handle it itself (the baselines), since Node writes the profile only
 * on a normal exit. The chat handles SIGTERM (a graceful close, then exit).
 */
import http from 'node:http';

const BURN_MS = 50;

function reply(res, body) {
  const json = JSON.stringify(body);
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': json.length });
  res.end(json);
}

const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, req, res, ...rest) {
  if (event === 'request' && req.url === '/burn') {
    const until = performance.now() + BURN_MS;
    let spins = 0;
    while (performance.now() < until) spins += 1;
    reply(res, { burnedMs: BURN_MS, spins });
    return true;
  }
  if (event === 'request' && req.url === '/bench/gc') {
    globalThis.gc?.();
    reply(res, { collected: typeof globalThis.gc === 'function', ...process.memoryUsage() });
    return true;
  }
  return emit.call(this, event, req, res, ...rest);
};

if (process.execArgv.some((arg) => arg.startsWith('--cpu-prof'))) {
  const onTerm = () => {
    if (process.listenerCount('SIGTERM') === 1) process.exit(0);
  };
  process.on('SIGTERM', onTerm);
}
