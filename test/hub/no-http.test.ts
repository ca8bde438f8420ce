/**
 * The hub speaks no HTTP (docs/design.md, "The hub"): it answers a poll with
 * a body through `Replies`, and the transport (server/http/poll-reply.ts)
 * writes the status, the headers and the connection. Read from the hub's
 * own files, so a status or a header written there again fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const HUB = join(import.meta.dirname, '../../server/hub');
// Node's HTTP module, a response's writers, the JSON answers' headers, and a
// status written as an argument (`writeHead(200`, `pollEnded(…, 200, ms)`).
const HTTP =
  /node:http|writeHead|setHeader|statusCode|JSON_HEADERS|Content-(Type|Length)|Connection|[(,] ?[1-5]\d\d\b(?!_)/;

describe('server/hub/', () => {
  it('imports nothing of HTTP and writes no status or header', () => {
    const found = readdirSync(HUB)
      .filter((name) => name.endsWith('.ts'))
      .flatMap((name) =>
        readFileSync(join(HUB, name), 'utf8')
          .split('\n')
          .map((line, i) => ({ at: `${name}:${i + 1}`, line }))
          .filter(({ line }) => !/^\s*(\*|\/\/|\/\*)/.test(line) && HTTP.test(line)),
      );
    expect(found).toEqual([]);
  });
});
