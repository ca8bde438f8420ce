/**
 * A separate process that opens a store by `DATABASE_URL`, the way another
 * server process or cluster worker would, for the contract's cross-process
 * cases: the built store (`dist/`, kept fresh by test/helpers/build.ts), as
 * a server process runs it, so neither this process nor its SQLite thread
 * loads the store's sources through tsx. Run as
 * `node --import tsx store-worker.ts <url> <command> …`:
 *
 * - `init <room>`: init the store (as a starting server does), then append one message;
 * - `append <room> <count> <tag> <inFlight>`: append `count` messages, `inFlight` at a time,
 *   with texts `<tag>-<n>`.
 *
 * It exits 0 when done and non-zero (with the error on stderr) otherwise.
 */

import type * as OpenStore from '../../server/store/open-store.ts';
import { appendMany } from '../helpers/append-many.ts';
import { builtModule } from '../helpers/build.ts';

const { openStore } = await builtModule<typeof OpenStore>('server/store/open-store.js');

const [url, command, room, ...args] = process.argv.slice(2);
if (!url || !room) throw new Error('usage: store-worker.ts <url> <command> <room> …');

const store = await openStore(url);
try {
  await store.init();
  if (command === 'init') {
    await store.append({ room, nickname: `pid${process.pid}`, text: 'started' });
  } else if (command === 'append') {
    const [count, tag, inFlight] = [Number(args[0]), args[1], Number(args[2] ?? 1)];
    await appendMany(store, room, count, inFlight, tag, 'worker');
  } else {
    throw new Error(`unknown command ${command}`);
  }
} finally {
  await store.close();
}
