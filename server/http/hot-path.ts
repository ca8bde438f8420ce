/**
 * Which hot route a request asks for, matched once per request: the lane
 * (lane.ts) dispatches on it, and the connection layer in front of it
 * (server/net/pipelining.ts) asks whether a request is a poll, so both read
 * the one answer kept on the request.
 */
import type { IncomingMessage } from 'node:http';

/** Every hot route, and its methods (HEAD: the GET answer without its body). */
export const LANE_ROUTES = [
  { path: '/recv', methods: ['GET', 'HEAD'] },
  { path: '/send', methods: ['POST'] },
  { path: '/time', methods: ['GET', 'HEAD'] },
] as const;

export type LanePath = (typeof LANE_ROUTES)[number]['path'];

/** A request for a hot route, by a method it answers. */
export interface HotRequest {
  path: LanePath;
  /** The query string after `?`, '' when none. */
  rawQuery: string;
}

/** The hot route of a path, in any spelling Express's routing accepts (any case, one trailing slash). */
export function lanePath(path: string): LanePath | undefined {
  if (path === '/recv' || path === '/send' || path === '/time') return path;
  let spelled = path.toLowerCase();
  if (spelled.length > 1 && spelled.endsWith('/')) spelled = spelled.slice(0, -1);
  return spelled === '/recv' || spelled === '/send' || spelled === '/time' ? spelled : undefined;
}

/** Whether the hot handler answers `method` on `path` (`LANE_ROUTES`; the others get the app's 405). */
function answers(path: LanePath, method: string | undefined): boolean {
  if (path === '/send') return method === 'POST';
  return method === 'GET' || method === 'HEAD';
}

const matched = Symbol('hotRequest');
type Matched = IncomingMessage & { [matched]?: HotRequest | null };

/** The hot route `req` asks for, or undefined: matched on the first call, kept on the request. */
export function hotRequestOf(req: IncomingMessage): HotRequest | undefined {
  const known = (req as Matched)[matched];
  if (known !== undefined) return known ?? undefined;
  const url = req.url ?? '';
  const mark = url.indexOf('?');
  const path = lanePath(mark < 0 ? url : url.slice(0, mark));
  const hot =
    path !== undefined && answers(path, req.method)
      ? { path, rawQuery: mark < 0 ? '' : url.slice(mark + 1) }
      : null;
  (req as Matched)[matched] = hot;
  return hot ?? undefined;
}

/** Whether `req` is a long-poll (`GET` or `HEAD /recv`, in any spelling). */
export function isPoll(req: IncomingMessage): boolean {
  return hotRequestOf(req)?.path === '/recv';
}
