/**
 * The 2011 long-poll chat, as the articles wrote it: kept on purpose, flaws
 * and all, to be read beside the real server (README.md says what is wrong).
 */
import express from 'express';

const app = express();
app.use(express.urlencoded({ extended: false }), express.json());

// The whole state: one callback per waiting client.
let callbacks: Array<(message: object) => void> = [];

app.get('/recv', (_req, res) => {
  // No cursor, no timeout, no clean-up when the client goes away.
  callbacks.push((message) => res.json({ messages: [message] }));
});

app.post('/send', (req, res) => {
  const message = { nickname: req.body?.nickname, text: req.body?.text, time: new Date() };
  const waiting = callbacks;
  callbacks = [];
  for (const callback of waiting) callback(message);
  res.json({ status: 'ok' });
});

app.get('/time', (_req, res) => res.json({ time: new Date().toISOString() }));
// Not in the original: shows how many callbacks the array holds (flaw 3).
app.get('/stats', (_req, res) => res.json({ waiting: callbacks.length }));

const port = Number(process.env.PORT ?? 3001);
app.listen(port, () => console.log(`naive chat on http://127.0.0.1:${port}`));
