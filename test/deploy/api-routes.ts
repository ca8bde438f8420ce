/**
 * The routes the chat's Express app registers, read from the app itself, so
 * the proxy configs (web.config, nginx.conf) are checked against what the
 * server really serves: a route added to the app and not to a proxy fails
 * the deploy tests instead of answering 404 in production.
 */
import type { Express } from 'express';
import { startTestChat } from '../helpers/chat.ts';

interface Layer {
  route?: { path: string };
}

export async function apiRoutes(): Promise<string[]> {
  const chat = await startTestChat();
  try {
    const app = chat.server.listeners('request')[0] as Express;
    const stack = (app.router as unknown as { stack: Layer[] }).stack;
    const paths = stack.flatMap((layer) => (layer.route ? [layer.route.path] : []));
    return [...new Set(paths)].sort();
  } finally {
    await chat.close();
  }
}
