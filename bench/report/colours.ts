/**
 * One colour per server, the same in every chart of a report and in every
 * report: the naive chat is red wherever it appears, the chat blue. Keyed by
 * the server's id in the results (`chat`, `naive`, …), not by its place in a
 * chart, which changes from chart to chart.
 */

const FIXED: Record<string, string> = {
  chat: '#2563eb', // blue: the chat (SQLite), and the chat at WORKERS=1
  'chat-w1': '#2563eb',
  'chat-w2': '#7c3aed', // violet: the chat at WORKERS=2
  'chat-disk': '#60a5fa', // light blue: the chat with its SQLite file on disk
  'chat-mysql': '#0891b2', // cyan: the chat on MySQL
  'bare-http': '#6b7280', // grey: the in-memory node:http baseline
  'bare-express': '#16a34a', // green: bare Express
  naive: '#dc2626', // red: the naive 2011 chat
};

/** For servers a later bench adds: stable per id, distinct from the fixed ones. */
const SPARE = ['#ea580c', '#db2777', '#ca8a04', '#0d9488', '#9333ea', '#65a30d'];

export function serverColour(server: string): string {
  const fixed = FIXED[server];
  if (fixed) return fixed;
  let hash = 0;
  for (const char of server) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return SPARE[hash % SPARE.length]!;
}

/** The server id of a T7 or cluster row, which are the chat at a number of workers. */
export const workersServer = (workers: number): string => `chat-w${workers}`;
