import * as fc from 'fast-check';
import type { Server } from 'node:http';
import { MAX_JSON_DEPTH } from '../../src/common/json-body.middleware';
import { testDatabases } from '../support/databases';
import { startTestApp, TestApp } from '../support/app';
import { listening, rawRequest } from '../support/raw-http';

/**
 * Hostile input on every route: fast-check-generated bodies, query strings, path segments and
 * headers. Whatever arrives, the answer is never a 5xx and always the spec's envelope with the
 * request id echoed in X-Request-Id.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

function expectEnvelope(res: { status: number; body: any; headers: Record<string, string>; text: string }, ctx: string) {
  if (res.status >= 500) throw new Error(`${ctx}: ${res.status} ${res.text.slice(0, 300)}`);
  const rid = res.headers['x-request-id'];
  if (!rid) throw new Error(`${ctx}: no X-Request-Id`);
  if (res.status === 204) return;
  if (res.status >= 400) {
    const e = res.body?.error;
    if (!e || typeof e.code !== 'string' || typeof e.message !== 'string' || e.request_id !== rid) {
      throw new Error(`${ctx}: ${res.status} without the error envelope: ${res.text.slice(0, 300)}`);
    }
  } else if (res.headers['content-type']?.includes('json') && res.body?.meta && res.body.meta.request_id !== rid) {
    throw new Error(`${ctx}: meta.request_id differs from X-Request-Id`);
  }
}

const jsonValue = fc.jsonValue({ maxDepth: 3 });
const fieldValue = fc.oneof(fc.string({ maxLength: 40 }), fc.integer(), fc.boolean(), fc.constant(null), jsonValue, fc.webUrl(), fc.constantFrom('https://127.0.0.1/', 'https://[::1]/', 'https://0x7f000001/', 'https://hooks.example.com:0/', 'https://hooks.example.com/\u0000', 'trends.surge', 'r/x', '__proto__'));
const body = fc.oneof(
  fc.record({ url: fieldValue, event: fieldValue, subreddit: fieldValue, allow_nonstandard_port: fieldValue }, { requiredKeys: [] }),
  fc.dictionary(fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'url', 'prototype')), fieldValue, { maxKeys: 6 }),
  jsonValue,
);
const segment = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.stringMatching(/^[0-9A-Z]{26}$/),
  fc.constantFrom('%00', '..', '%2e%2e', '%ff', '😀', 'a'.repeat(3000), '01ARZ3NDEKTSV4RRFFQ69G5FAV', 'msg_00000000000000000000000000'),
);
const query = fc.dictionary(fc.constantFrom('limit', 'cursor', 'x', 'limit[]', 'cursor[a]'), fc.oneof(fc.string({ maxLength: 60 }), fc.integer().map(String), fc.constant('')), { maxKeys: 3 });
const rawBody = fc.oneof(fc.string({ maxLength: 200 }), fc.constantFrom('{', '[', '{"url":', '\u0000', '{"a":1}{"b":2}', 'null', '1e309', '"\\ud800"'));
const contentType = fc.constantFrom('application/json', 'application/json; charset=utf-8', 'application/json; charset=latin1', 'text/plain', 'application/x-www-form-urlencoded', 'application/merge-patch+json', '', 'multipart/form-data; boundary=x');

/** A JSON value nested `depth` levels deep, as text: arrays, objects or both, around any leaf. */
const deepJson = fc
  .record({ depth: fc.integer({ min: 1, max: 3000 }), kinds: fc.array(fc.constantFrom('[', '{'), { minLength: 1, maxLength: 3 }), leaf: fc.constantFrom('1', '"x"', 'null', '[]', '{}', '"https://hooks.example.com/x"') })
  .map(({ depth, kinds, leaf }) => {
    let open = '';
    let close = '';
    for (let i = 0; i < depth; i++) {
      const k = kinds[i % kinds.length];
      open += k === '[' ? '[' : '{"a":';
      close = (k === '[' ? ']' : '}') + close;
    }
    return { depth: depth + (leaf === '[]' || leaf === '{}' ? 1 : 0), text: open + leaf + close };
  });

/** Header lines with bytes the HTTP parser refuses or must handle: controls, NUL, DEL, high bytes, bare CR/LF. */
const hostileHeaderValue = fc
  .array(fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.constantFrom(0x00, 0x01, 0x09, 0x0b, 0x0d, 0x7f, 0x80, 0xff, 0x0a)), { maxLength: 60 })
  .map((codes) => Buffer.from(codes));
// Sizes that are wrong in form, or the right one (2, for `{}`): a well-formed wrong size would only make the server wait.
const chunkSize = fc.constantFrom('zz', '-1', '', ' 2', '2;ext', 'ffffffffffffffffff', '0x2', '2 ', 'g', '2\u0000', '2', '02');

describe.each(testDatabases())('fuzzing every route on %s', (_name, makeDb) => {
  let t: TestApp;
  let auth: Record<string, string>;
  let webhookId: string;

  beforeAll(async () => {
    t = await startTestApp(makeDb(), { env: { PLAN_RATE_LIMITS: 'business=100000000,free=100000000' } });
    auth = (await t.customer('business')).auth;
    webhookId = (await t.http().post('/v1/webhooks').set(auth).send({ url: 'https://hooks.example.com/x', event: 'trends.surge', subreddit: 'fuzzing' })).body.data.id;
  });
  afterAll(() => t?.close());

  const routes = (id: string, seg: string): [string, string][] => [
    ['post', '/v1/webhooks'],
    ['get', '/v1/webhooks'],
    ['get', `/v1/webhooks/${seg}`],
    ['delete', `/v1/webhooks/${seg}`],
    ['get', `/v1/webhooks/${id}/deliveries`],
    ['post', `/v1/webhooks/${seg}/test`],
    ['post', `/v1/webhooks/${seg}/rotate-secret`],
    ['post', `/v1/webhooks/${id}/deliveries/${seg}/retry`],
    ['get', `/v1/subreddits/${seg}/posts`],
    ['get', `/v1/users/${seg}/posts`],
    ['patch', `/v1/webhooks/${seg}`],
    ['get', `/${seg}`],
  ];

  it('JSON bodies, path segments and query strings never cause a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(body, segment, query, fc.nat(11), async (b, seg, q, which) => {
        const [method, path] = routes(webhookId, encodeURIComponent(seg))[which];
        const req = (t.http() as any)[method](path).set(auth).query(q);
        const res = method === 'post' || method === 'patch' ? await req.send(JSON.stringify(b)).set('Content-Type', 'application/json') : await req;
        expectEnvelope(res, `${method.toUpperCase()} ${path} ${JSON.stringify(b).slice(0, 100)}`);
      }),
      { numRuns: RUNS },
    );
  });

  it('raw bodies with any content type never cause a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(rawBody, contentType, async (raw, type) => {
        const req = t.http().post('/v1/webhooks').set(auth);
        if (type) req.set('Content-Type', type);
        expectEnvelope(await req.send(raw), `POST /v1/webhooks ${type} ${JSON.stringify(raw).slice(0, 80)}`);
      }),
      { numRuns: RUNS },
    );
  });

  it(`deeply nested JSON in any field never causes a 5xx, and nesting past ${MAX_JSON_DEPTH} levels is 400 VALIDATION_ERROR`, async () => {
    await fc.assert(
      fc.asyncProperty(deepJson, fc.constantFrom('url', 'event', 'subreddit', 'allow_nonstandard_port', 'extra'), async (deep, field) => {
        const text = `{"url":"https://hooks.example.com/x","event":"trends.surge","subreddit":"fuzzing",${JSON.stringify(field)}:${deep.text}}`;
        const res = await t.http().post('/v1/webhooks').set(auth).set('Content-Type', 'application/json').send(text);
        expectEnvelope(res, `depth ${deep.depth} in ${field}`);
        if (deep.depth + 1 > MAX_JSON_DEPTH) {
          if (res.status !== 400 || res.body.error.code !== 'VALIDATION_ERROR') throw new Error(`depth ${deep.depth} in ${field}: ${res.status} ${res.text.slice(0, 200)}`);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('header bytes and chunk sizes the HTTP parser refuses are answered in the envelope, and the server keeps serving', async () => {
    const port = await listening(t.app.getHttpServer() as Server);
    await fc.assert(
      fc.asyncProperty(hostileHeaderValue, chunkSize, fc.boolean(), async (value, size, chunked) => {
        const head = Buffer.from(`POST /v1/webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth.Authorization}\r\nContent-Type: application/json\r\nX-Fuzz: `);
        const tail = chunked ? `\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${size}\r\n{}\r\n0\r\n\r\n` : '\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}';
        const res = await rawRequest(port, Buffer.concat([head, value, Buffer.from(tail)]));
        expectEnvelope(res, `X-Fuzz ${JSON.stringify(value.toString('latin1'))} chunk ${JSON.stringify(size)}`);
      }),
      { numRuns: RUNS },
    );
    expect((await t.http().get('/healthz')).status).toBe(200);
  });

  it('arbitrary Authorization and X-Request-Id headers never cause a 5xx', async () => {
    const header = fc.oneof(fc.string({ maxLength: 100 }).filter((s) => /^[\x20-\x7e]*$/.test(s)), fc.constantFrom('Bearer', 'Bearer  th_live_', 'bearer th_live_' + 'A'.repeat(38)));
    await fc.assert(
      fc.asyncProperty(header, header, async (authz, rid) => {
        const res = await t.http().get('/v1/webhooks').set('Authorization', authz).set('X-Request-Id', rid);
        expectEnvelope(res, `Authorization ${JSON.stringify(authz)}`);
      }),
      { numRuns: RUNS },
    );
  });
});
