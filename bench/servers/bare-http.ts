/**
 * The baseline: an in-memory cursor server on plain `node:http`, the floor
 * that Node's HTTP stack allows (issue 11). Per room an array of messages and
 * the waiting responses; no framework, no validation, no store, no presence.
 * Every T6 figure is also given as a ratio to this server's.
 *
 * It keeps the chat's wire format and cursor semantics, so the same load runs
 * against it unchanged: ids are dense from 1 (id n is `messages[n - 1]`), a
 * poll with `since` gets what came after it at once (at most 100) or waits for
 * the next message, and every answer is `{messages, cursor, online}`. Keep it
 * this small: each line added here raises the bar the chat is measured by.
 * (`/stats` tells the load generator how many polls wait; `/time` and
 * `/history` are the articles' other routes.)
 */
import { createServer, type ServerResponse } from 'node:http';
import type { Message } from '../../protocol/protocol.ts';

const rooms = new Map<string, { messages: Message[]; waiting: Set<ServerResponse> }>();
let waitingTotal = 0;
const room = (name: string) => {
  let state = rooms.get(name);
  if (!state) {
    state = { messages: [], waiting: new Set() };
    rooms.set(name, state);
  }
  return state;
};

function json(res: ServerResponse, body: string | Buffer): void {
  res.writeHead(200, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
  });
  res.end(body);
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const state = room(url.searchParams.get('room') ?? 'main');
  if (url.pathname === '/time')
    return json(res, JSON.stringify({ time: new Date().toISOString() }));
  if (url.pathname === '/stats')
    return json(res, JSON.stringify({ waiting: waitingTotal, pid: process.pid }));
  if (url.pathname === '/history')
    return json(res, JSON.stringify({ messages: state.messages.slice(-50) }));
  if (url.pathname === '/recv') {
    const since = Number(url.searchParams.get('since') ?? state.messages.length);
    const after = state.messages.slice(since, since + 100);
    if (after.length > 0) {
      return json(res, JSON.stringify({ messages: after, cursor: after.at(-1)!.id, online: 0 }));
    }
    state.waiting.add(res);
    waitingTotal += 1;
    res.on('close', () => {
      if (state.waiting.delete(res)) waitingTotal -= 1;
    });
    return;
  }
  if (url.pathname === '/send' && req.method === 'POST') {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const fields = new URLSearchParams(body);
      const state = room(fields.get('room') ?? 'main');
      const message: Message = {
        id: state.messages.length + 1,
        room: fields.get('room') ?? 'main',
        nickname: fields.get('nickname') ?? 'Anonymous',
        text: fields.get('text') ?? '',
        time: new Date().toISOString(),
      };
      state.messages.push(message);
      json(res, JSON.stringify({ status: 'ok', id: message.id, message }));
      // Serialise once for every waiter (all of them were at the previous head).
      const reply = Buffer.from(
        JSON.stringify({ messages: [message], cursor: message.id, online: 0 }),
      );
      waitingTotal -= state.waiting.size;
      for (const waiter of state.waiting) json(waiter, reply);
      state.waiting.clear();
    });
    return;
  }
  res.writeHead(404).end();
});

server.listen(Number(process.env.PORT ?? 3002), '127.0.0.1');
