import type { Server } from 'node:http';
import { MAX_JSON_DEPTH } from '../../src/common/json-body.middleware';
import { testTargets } from '../support/databases';
import { startTestApp, TestApp } from '../support/app';
import { listening, rawRequest, RawAnswer } from '../support/raw-http';

/**
 * Issue #12 item 3: input that used to crash a layer below the API, answered in the envelope.
 * Deeply nested JSON (class-transformer recursed until the stack ran out: 500) and requests Node's
 * HTTP parser refuses (a bare `400` with no body before).
 */
function expectEnvelope(res: { status: number; body: any; headers: Record<string, string> }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
}

const nested = (levels: number, leaf: string) => '['.repeat(levels) + leaf + ']'.repeat(levels);

describe.each(testTargets())('malformed input on %s', (_name, makeDb, adapter) => {
  let t: TestApp;
  let port: number;
  let auth: { Authorization: string };

  const post = (body: string) => t.http().post('/v1/webhooks').set(auth).set('Content-Type', 'application/json').send(body);
  const raw = (lines: string[], body = '') => rawRequest(port, lines.join('\r\n') + '\r\n\r\n' + body);
  const stillServes = async () => expect((await t.http().get('/healthz')).status).toBe(200);

  beforeAll(async () => {
    t = await startTestApp(makeDb(), { adapter });
    port = await listening(t.app.getHttpServer() as Server);
    auth = (await t.customer()).auth;
  });
  afterAll(() => t?.close());

  it('refuses 2,000 levels of nested arrays in a field with 400 VALIDATION_ERROR, not a 500', async () => {
    const res = await post(`{"url":${nested(2000, '"https://hooks.example.com/x"')},"event":"trends.surge","subreddit":"deepnest"}`);
    expectEnvelope(res, 400, 'VALIDATION_ERROR');
    expect(res.body.error.message).toMatch(new RegExp(`deeper than ${MAX_JSON_DEPTH} levels`));
    await stillServes();
  });

  it('refuses a whole body nested 30,000 levels deep (64 KiB of brackets)', async () => {
    const res = await post(`{"url":${nested(30_000, '1')}}`);
    expectEnvelope(res, 400, 'VALIDATION_ERROR');
  });

  it(`accepts nesting up to ${MAX_JSON_DEPTH} levels as JSON, then names the field whose type is wrong`, async () => {
    const res = await post(`{"url":${nested(MAX_JSON_DEPTH - 1, '"https://hooks.example.com/x"')},"event":"trends.surge","subreddit":"deepnest"}`);
    expectEnvelope(res, 400, 'VALIDATION_ERROR');
    expect(res.body.error.message).toBe('url must be a string, not an array');
    const obj = await post('{"url":"https://hooks.example.com/x","event":{"a":{"b":1}},"subreddit":"deepnest"}');
    expectEnvelope(obj, 400, 'VALIDATION_ERROR');
    expect(obj.body.error.message).toMatch(/^event must be a (string|single value), not an object$/);
    const flag = await post('{"url":"https://hooks.example.com/x","event":"trends.surge","subreddit":"deepnest","allow_nonstandard_port":[true]}');
    expect(flag.body.error.message).toBe('allow_nonstandard_port must be a boolean, not an array');
  });

  it('answers a NUL in a header value with the 400 envelope', async () => {
    const res = await raw(['GET /v1/webhooks HTTP/1.1', 'Host: 127.0.0.1', 'X-Note: a\u0000b', `Authorization: ${auth.Authorization}`]);
    expectEnvelope(res, 400, 'BAD_REQUEST');
    expect(res.body.error.message).toMatch(/HPE_INVALID_HEADER_TOKEN/);
    await stillServes();
  });

  it('answers a chunk size that is not hexadecimal with the 400 envelope', async () => {
    const res = await raw(
      ['POST /v1/webhooks HTTP/1.1', 'Host: 127.0.0.1', `Authorization: ${auth.Authorization}`, 'Content-Type: application/json', 'Transfer-Encoding: chunked'],
      'zz\r\n{}\r\n0\r\n\r\n',
    );
    expectEnvelope(res, 400, 'BAD_REQUEST');
    expect(res.body.error.message).toMatch(/chunk size/);
    await stillServes();
  });

  it('answers Content-Length together with chunked, and a broken request line, with the 400 envelope', async () => {
    expectEnvelope(
      await raw(['POST /v1/webhooks HTTP/1.1', 'Host: 127.0.0.1', 'Content-Length: 2', 'Transfer-Encoding: chunked', 'Content-Type: application/json'], '{}'),
      400,
      'BAD_REQUEST',
    );
    expectEnvelope(await raw(['GET /v1/webhooks HTTP/9.9', 'Host: 127.0.0.1']), 400, 'BAD_REQUEST');
    expectEnvelope(await raw(['GE\u0001T / HTTP/1.1', 'Host: 127.0.0.1']), 400, 'BAD_REQUEST');
  });

  it('answers headers over the parser limit with 431 HEADERS_TOO_LARGE in the envelope', async () => {
    const res: RawAnswer = await raw(['GET /v1/webhooks HTTP/1.1', 'Host: 127.0.0.1', `X-Big: ${'a'.repeat(20_000)}`]);
    expectEnvelope(res, 431, 'HEADERS_TOO_LARGE');
    await stillServes();
  });
});
