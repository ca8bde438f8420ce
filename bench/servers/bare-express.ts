/**
 * A bare Express 5 app with the chat's `/time` route and nothing else: the
 * yardstick for the chat's own per-request cost (target: ≥ 0.9× its rate).
 */
import express from 'express';

const app = express();
app.set('etag', false);
app.get('/time', (_req, res) => {
  res.set('Cache-Control', 'no-store').json({ time: new Date().toISOString() });
});
app.listen(Number(process.env.PORT ?? 3003), '127.0.0.1');
