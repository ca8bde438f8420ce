/**
 * The naive chat (../naive/server.ts) with its three flaws fixed, and
 * nothing more: a cursor, a poll timeout, and clean-up when a client leaves.
 * Its page, index.html, is the 2011 page with a cursor, messages put in as
 * text, and a retry after an error. The guide (docs/long-polling.md) reads it
 * line by line; the real server does the same with a store, ordering across
 * processes, and the rest.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import express, { type Response } from 'express';

const POLL_TIMEOUT_MS = Number(process.env.POLL_TIMEOUT_MS ?? 25_000);
const app = express();
app.use(express.urlencoded({ extended: false }), express.json());

type Message = { id: number; nickname: string; text: string };
/** Fix 1, the cursor: every message is kept; its id is its place in the list (1, 2, 3…). */
const messages: Message[] = [];
/** A waiting poll: its response, the id of the last message its client has, its deadline. */
type Waiter = { res: Response; since: number; timer: NodeJS.Timeout };
const waiters = new Set<Waiter>();

/** The one way out of the set (answered or timed out): the timer goes with it. */
function answer(waiter: Waiter, list: Message[]): void {
  clearTimeout(waiter.timer);
  waiters.delete(waiter);
  waiter.res.json({ messages: list, cursor: list.at(-1)?.id ?? waiter.since });
}

app.get('/recv', (req, res) => {
  // No `since` (the 2011 page): "from now on", as before.
  const since = req.query.since === undefined ? messages.length : Number(req.query.since) || 0;
  const missed = messages.slice(since);
  // Fix 1: whatever came after the cursor is answered at once, so nothing falls between polls.
  if (missed.length > 0) return void res.json({ messages: missed, cursor: missed.at(-1)!.id });
  // Fix 2: the timeout. Every poll ends, with an empty list at worst, and the client polls again.
  const waiter: Waiter = {
    res,
    since,
    timer: setTimeout(() => answer(waiter, []), POLL_TIMEOUT_MS),
  };
  waiters.add(waiter);
  // Fix 3: the clean-up. A client that goes away takes its waiter and its timer with it.
  res.on('close', () => {
    clearTimeout(waiter.timer);
    waiters.delete(waiter);
  });
});

app.post('/send', (req, res) => {
  const id = messages.length + 1;
  messages.push({ id, nickname: req.body?.nickname ?? 'Anonymous', text: req.body?.text ?? '' });
  // Each waiter gets what came after its own cursor.
  for (const waiter of [...waiters])
    if (waiter.since < id) answer(waiter, messages.slice(waiter.since));
  res.json({ status: 'ok', id });
});

app.get('/', (_req, res) => res.sendFile(join(import.meta.dirname, 'index.html')));
const jquery = join(dirname(createRequire(import.meta.url).resolve('jquery')), 'jquery.min.js');
app.get('/jquery.min.js', (_req, res) => res.sendFile(jquery));
app.get('/stats', (_req, res) => res.json({ waiting: waiters.size, messages: messages.length }));

const port = Number(process.env.PORT ?? 3002);
const server = app.listen(port, (error?: Error) => {
  if (error) throw error; // A busy port stops the start, loudly.
  console.log(`fixed chat on http://127.0.0.1:${(server.address() as { port: number }).port}`);
});
