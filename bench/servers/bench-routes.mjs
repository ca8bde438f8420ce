/**
 * Three bench-only routes, preloaded into every server under test
 * (`node --expose-gc --import ./bench/servers/bench-routes.mjs …`), so the
 * product has no such routes. Cluster workers inherit `--import`.
 *
 * - `GET /burn`: answers after about 50 ms of pure CPU, the articles'
 *   "CPU-bound handler" (T7).
 * - `GET /bench/gc`: runs a full garbage collection, so T5 reads the memory
 *   the waiting polls hold, not garbage a lazy collector has not freed yet
 *   (up to a young generation's worth: several KB per client at N=10,000).
 * - `GET /bench/stats`: `{waiting, pid}`, the `GET /recv` requests this
 *   process holds unanswered, for the load generator to know when every
 *   poll is in. Counted only with `BENCH_COUNT_POLLS=1` (the chat; the
 *   baselines keep their own `/stats`). The chat's own count is on
 *   `/metrics`, but a scrape there also lists the process's open files and
 *   handles, 10,000 of each at T5's N=10,000: polled every 50 ms while T5
 *   arms, it cost the chat more CPU and garbage than its polls did.
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

const countPolls = process.env.BENCH_COUNT_POLLS === '1';
let waiting = 0;
const answered = () => {
  waiting -= 1;
};

const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, req, res, ...rest) {
  if (countPolls && event === 'request' && req.url.startsWith('/recv')) {
    waiting += 1;
    res.once('close', answered);
  }
  if (event === 'request' && req.url === '/bench/stats') {
    reply(res, { waiting, pid: process.pid });
    return true;
  }
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
