/**
 * Preloaded into the chat for T7 only (`node --import ./bench/servers/burn-route.mjs
 * dist/server/main.js`): answers `GET /burn` after about 50 ms of pure CPU,
 * the articles' "CPU-bound handler", without adding such a route to the
 * product. Cluster workers inherit `--import`, so each worker has it too.
 */
import http from 'node:http';

const BURN_MS = 50;
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, req, res, ...rest) {
  if (event === 'request' && req.url === '/burn') {
    const until = performance.now() + BURN_MS;
    let spins = 0;
    while (performance.now() < until) spins += 1;
    const body = JSON.stringify({ burnedMs: BURN_MS, spins });
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
    res.end(body);
    return true;
  }
  return emit.call(this, event, req, res, ...rest);
};
