import type { Server } from 'node:http';
import { testTargets } from '../support/databases';
import { startTestApp, TestApp } from '../support/app';
import { listening, rawRequest, RawAnswer } from '../support/raw-http';

/**
 * Issue #12 item 7: ambiguous credentials. Anything but exactly one `Authorization: Bearer <key>`
 * header is one clear 401 UNAUTHORIZED: a proxy in front may read a different one of several
 * headers, or another spelling, than we would.
 */
function expectUnauthorized(res: RawAnswer, ctx: string) {
  expect({ ctx, status: res.status, code: res.body?.error?.code }).toEqual({ ctx, status: 401, code: 'UNAUTHORIZED' });
  expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
  expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
}

describe.each(testTargets())('credentials on %s', (_name, makeDb, adapter) => {
  let t: TestApp;
  let port: number;
  let key: string;
  let otherKey: string;

  const get = (headerLines: string[]) =>
    rawRequest(port, ['GET /v1/webhooks HTTP/1.1', 'Host: 127.0.0.1', ...headerLines, 'Connection: close', '', ''].join('\r\n'));

  beforeAll(async () => {
    t = await startTestApp(makeDb(), { adapter });
    port = await listening(t.app.getHttpServer() as Server);
    key = (await t.customer()).key;
    otherKey = (await t.customer()).key;
  });
  afterAll(() => t?.close());

  it('accepts exactly one "Bearer <key>" header, whatever blanks surround the field value (not part of it in HTTP)', async () => {
    expect((await get([`Authorization: Bearer ${key}`])).status).toBe(200);
    expect((await get([`Authorization: \t Bearer ${key} \t`])).status).toBe(200);
  });

  it('refuses several Authorization headers, never reading the first of them', async () => {
    for (const lines of [
      [`Authorization: Bearer ${key}`, 'Authorization: Bearer th_live_forged'],
      [`Authorization: Bearer ${key}`, `authorization: Bearer ${otherKey}`],
      [`Authorization: Bearer ${key}`, `AUTHORIZATION: Bearer ${key}`],
      [`Authorization: Bearer ${key}`, 'Authorization:'],
    ]) {
      const res = await get(lines);
      expectUnauthorized(res, lines.join(' | '));
      expect(res.body.error.message).toMatch(/exactly one Authorization header/);
    }
  });

  it.each([
    ['two spaces after the scheme', (k: string) => `Bearer  ${k}`],
    ['a tab after the scheme', (k: string) => `Bearer\t${k}`],
    ['a blank inside the value, after the key', (k: string) => `Bearer ${k} x`],
    ['a lower-case scheme', (k: string) => `bearer ${k}`],
    ['an upper-case scheme', (k: string) => `BEARER ${k}`],
    ['the key without a scheme', (k: string) => k],
    ['another scheme', (k: string) => `Token ${k}`],
    ['Basic credentials', () => 'Basic dXNlcjpwYXNz'],
    ['a quoted key', (k: string) => `Bearer "${k}"`],
    ['two keys in one value', (k: string) => `Bearer ${k}, Bearer ${k}`],
    ['the scheme alone', () => 'Bearer'],
    ['an empty value', () => ''],
  ])('refuses %s with one 401', async (_case, value) => {
    expectUnauthorized(await get([`Authorization: ${value(key)}`]), value(key));
  });
});
