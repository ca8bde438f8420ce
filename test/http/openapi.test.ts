/**
 * docs/openapi.yaml against the running chat: every route of the router is
 * in the document with its methods, every error code of the catalogue is in
 * its list, and real answers (a send, a poll, a page, the operations
 * routes, refusals) match the schema the document gives for their route and
 * status, headers included. CI also fuzzes the chat from the document
 * (scripts/fuzz-api.sh, schemathesis).
 */
import { readFile } from 'node:fs/promises';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { errorCodes } from '../../server/core/errors.ts';
import { API_ROUTES } from '../../server/http/api-routes.ts';
import { startTestChat, type TestChat, until } from '../helpers/chat.ts';

interface Operation {
  responses: Record<string, Response | Ref>;
}
interface Ref {
  $ref: string;
}
interface Response {
  headers?: Record<string, Ref | { required?: boolean; schema: object }>;
  content?: { 'application/json': { schema: object } };
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: {
    responses: Record<string, Response>;
    headers: Record<string, { required?: boolean; schema: object }>;
    schemas: Record<string, { enum?: string[] }>;
  };
}

let doc: Document;
let ajv: Ajv2020;

beforeAll(async () => {
  doc = parse(await readFile(new URL('../../docs/openapi.yaml', import.meta.url), 'utf8'));
  ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  // The document whole, so its `#/components/…` references resolve.
  ajv.addSchema({ $id: 'openapi', ...(doc as object) }, 'openapi');
});

const deref = <T>(value: T | Ref): T => {
  if (typeof value === 'object' && value !== null && '$ref' in value) {
    const path = (value as Ref).$ref.replace(/^#\//, '').split('/');
    // biome-ignore lint/suspicious/noExplicitAny: walking a parsed YAML document
    return path.reduce((node: any, key) => node[key], doc) as T;
  }
  return value as T;
};

/** The documented answer for a route, method and status; throws when there is none. */
function documented(path: string, method: string, status: number): Response {
  const operation = doc.paths[path]?.[method];
  if (!operation) throw new Error(`${method.toUpperCase()} ${path} is not in docs/openapi.yaml`);
  const response = operation.responses[String(status)];
  if (!response) throw new Error(`${method.toUpperCase()} ${path} documents no ${status}`);
  return deref(response);
}

function schemaValidator(schema: object): ValidateFunction {
  // A schema from the document, compiled where its references resolve.
  const ref = (schema as Partial<Ref>).$ref;
  if (ref) return ajv.getSchema(`openapi${ref}`)!;
  return ajv.compile({ $ref: 'openapi', ...schema, $id: undefined });
}

/** Asserts that `res` is what the document says `method path` answers with its status. */
async function expectDocumented(res: globalThis.Response, path: string, method = 'get') {
  const response = documented(path, method, res.status);
  for (const [name, header] of Object.entries(response.headers ?? {})) {
    const { required, schema } = deref(header);
    const value = res.headers.get(name);
    if (required) expect({ header: name, value }).not.toEqual({ header: name, value: null });
    if (value !== null) {
      const validate = schemaValidator(schema);
      expect({ header: name, ok: validate(value), errors: validate.errors }).toMatchObject({
        ok: true,
      });
    }
  }
  const media = response.content?.['application/json'];
  if (!media) return;
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = await res.json();
  const validate = schemaValidator(media.schema);
  const ok = validate(body);
  expect({ path, status: res.status, body, errors: ok ? null : validate.errors }).toEqual({
    path,
    status: res.status,
    body,
    errors: null,
  });
}

describe('docs/openapi.yaml', () => {
  it('has every route of the router, with its methods, and no other', () => {
    const paths = Object.keys(doc.paths).sort();
    expect(paths).toEqual(API_ROUTES.map((route) => route.path).sort());
    for (const { path, allow } of API_ROUTES) {
      // HEAD is GET without its body (Node leaves it out): documented as GET.
      const methods = allow
        .split(', ')
        .filter((method) => method !== 'HEAD')
        .map((method) => method.toLowerCase());
      expect({ path, methods: Object.keys(doc.paths[path]!).sort() }).toEqual({
        path,
        methods: methods.sort(),
      });
    }
  });

  it('lists every error code of the catalogue, and no other', () => {
    expect([...(doc.components.schemas.ErrorCode?.enum ?? [])].sort()).toEqual(
      Object.keys(errorCodes).sort(),
    );
  });

  it('documents, on some route, every status the catalogue answers with', () => {
    const statuses = new Set(
      Object.values(doc.paths).flatMap((ops) =>
        Object.values(ops).flatMap((op) => Object.keys(op.responses)),
      ),
    );
    for (const { status } of Object.values(errorCodes)) {
      expect({ status, documented: statuses.has(String(status)) }).toEqual({
        status,
        documented: true,
      });
    }
  });
});

describe('the running chat, against docs/openapi.yaml', () => {
  let chat: TestChat;
  afterEach(async () => {
    await chat?.close();
  });

  it('answers a send, a poll, a page and the operations routes as documented', async () => {
    chat = await startTestChat({ sendRatePerSec: 5, sendBurst: 20, pollTimeoutMs: 1_000 });
    const running = chat;
    // A poll with a client id that holds no version of the list: answered at once, with it.
    await expectDocumented(
      await running.get('/recv?since=0&client=abcdefgh1234&nickname=Ann'),
      '/recv',
    );
    const poll = running.get('/recv?since=0');
    await until(() => running.hub.waiting === 1, 'the poll to wait');
    const sent = await running.post('/send', { text: 'hi', nickname: 'Ann', key: 'k1' });
    await expectDocumented(sent, '/send', 'post');
    await expectDocumented(await poll, '/recv');
    await expectDocumented(await running.get('/recv?since=1'), '/recv'); // the timeout's empty answer
    await expectDocumented(await running.get('/recv?since=99'), '/recv'); // reset
    const page = await running.get('/history?limit=10');
    const etag = page.headers.get('etag');
    await expectDocumented(page, '/history');
    const unchanged = await running.get('/history?limit=10', {
      headers: { 'if-none-match': etag ?? '' },
    });
    expect(unchanged.status).toBe(304);
    await expectDocumented(unchanged, '/history');
    await expectDocumented(
      await running.post('/typing', { client: 'abcdefgh1234', nickname: 'Ann' }),
      '/typing',
      'post',
    );
    for (const path of ['/time', '/health', '/ready']) {
      await expectDocumented(await running.get(path), path);
    }
  });

  it('answers refusals as documented, with the JSON error body and their headers', async () => {
    chat = await startTestChat();
    await expectDocumented(await chat.get('/recv?room=No!'), '/recv');
    await expectDocumented(await chat.get('/history?limit=0'), '/history');
    await expectDocumented(await chat.post('/send', { nickname: 'no text' }), '/send', 'post');
    await expectDocumented(await chat.post('/typing', {}), '/typing', 'post');
    await expectDocumented(await chat.get('/send', { method: 'PUT' }), '/send', 'post');
    await expectDocumented(await chat.post('/time', {}), '/time');
    await expectDocumented(
      await chat.post('/send', 'text=hi', { headers: { 'content-type': 'text/plain' } }),
      '/send',
      'post',
    );
    const fields = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`f${i}`, 'x']));
    const many = await chat.post('/send', { text: 'hi', ...fields });
    expect(many.status).toBe(400);
    await expectDocumented(many, '/send', 'post');
    await chat.close();
    chat = await startTestChat({ sendRatePerSec: 1, sendBurst: 1 });
    expect((await chat.post('/send', { text: 'first' })).status).toBe(200);
    const limited = await chat.post('/send', { text: 'second' });
    expect(limited.status).toBe(429);
    await expectDocumented(limited, '/send', 'post');
  });
});
