/**
 * The 2011 long-poll chat, as the articles wrote it: kept on purpose, flaws
 * and all, to be read beside the real server (README.md says what is wrong).
 * It serves the articles' page, `index.html`, with jQuery from node_modules.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import express from 'express';

const app = express();
app.use(express.urlencoded({ extended: false }), express.json());

// The whole state: one callback per waiting client.
let callbacks: Array<(message: object) => void> = [];

app.get('/', (_req, res) => res.sendFile(join(import.meta.dirname, 'index.html')));
// The page loaded jQuery from Google's CDN; here it comes from node_modules.
const jquery = join(dirname(createRequire(import.meta.url).resolve('jquery')), 'jquery.min.js');
app.get('/jquery.min.js', (_req, res) => res.sendFile(jquery));

app.get('/recv', (_req, res) => {
  // No cursor, no timeout, no clean-up when the client goes away.
  callbacks.push((message) => res.json({ messages: [message] }));
});

app.post('/send', (req, res) => {
  // req.param('nickname', 'Anonymous') in 2011: the default only when the field is missing.
  const message = { nickname: req.body?.nickname ?? 'Anonymous', text: req.body?.text ?? '' };
  const waiting = callbacks;
  callbacks = [];
  for (const callback of waiting) callback(message);
  res.json({ status: 'ok' });
});

app.get('/time', (_req, res) => res.json({ time: new Date().toISOString() }));
// Not in the original: shows how many callbacks the array holds (flaw 3).
app.get('/stats', (_req, res) => res.json({ waiting: callbacks.length }));

const port = Number(process.env.PORT ?? 3001);
const server = app.listen(port, (error?: Error) => {
  // Not in the original either: Express 5 hands a listen error (port busy) to this callback.
  if (error) throw error;
  console.log(`naive chat on http://127.0.0.1:${(server.address() as { port: number }).port}`);
});
