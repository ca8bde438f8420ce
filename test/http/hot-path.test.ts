/**
 * The hot route of a request, matched once (server/http/hot-path.ts): the
 * lane and the pipelining guard in front of it read the same answer.
 */
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { hotRequestOf, isPoll } from '../../server/http/hot-path.ts';

const request = (method: string, url: string) => ({ method, url }) as IncomingMessage;

describe('hotRequestOf', () => {
  it('matches every spelling Express routes, with the raw query', () => {
    expect(hotRequestOf(request('GET', '/RECV/?since=3&room=a'))).toEqual({
      path: '/recv',
      rawQuery: 'since=3&room=a',
    });
    expect(hotRequestOf(request('POST', '/send'))).toEqual({ path: '/send', rawQuery: '' });
    expect(hotRequestOf(request('HEAD', '/Time'))).toEqual({ path: '/time', rawQuery: '' });
  });

  it('leaves other routes and other methods to the app', () => {
    expect(hotRequestOf(request('POST', '/recv'))).toBeUndefined();
    expect(hotRequestOf(request('GET', '/send'))).toBeUndefined();
    expect(hotRequestOf(request('GET', '/recv//'))).toBeUndefined();
    expect(hotRequestOf(request('GET', '/history'))).toBeUndefined();
  });

  it('matches once: a later look reads the first answer, whatever the url became', () => {
    const req = request('GET', '/recv?client=a');
    const first = hotRequestOf(req);
    req.url = '/history';
    expect(hotRequestOf(req)).toBe(first);
    expect(isPoll(req)).toBe(true);
  });
});
