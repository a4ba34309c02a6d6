import type { Server } from 'node:http';
import { testTargets } from '../support/databases';
import { startTestApp, TestApp } from '../support/app';
import { listening, rawConnect, rawRequest, trickle } from '../support/raw-http';

/**
 * Issue #25 item 5: slow clients on both adapters. A connection that trickles its headers
 * (slow-loris) or its body is closed at the configured deadline (fastify had none; express
 * answered after 300 s), the listener holds a bounded number of connections, and a request's body
 * is read only once its key is checked: an unauthenticated client cannot make the server buffer it.
 */
const HEADERS_TIMEOUT_MS = 1000;
const REQUEST_TIMEOUT_MS = 2000;
const MAX_CONNECTIONS = 12;
// Node checks the deadlines on a timer (a quarter of the shorter one here), and the machine is shared.
const SLACK_MS = 1500;

describe.each(testTargets())('slow clients on %s', (_name, makeDb, adapter) => {
  let t: TestApp;
  let port: number;
  let auth: { Authorization: string };

  beforeAll(async () => {
    t = await startTestApp(makeDb(), {
      adapter,
      env: {
        HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        HTTP_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
      },
    });
    port = await listening(t.app.getHttpServer() as Server);
    auth = (await t.customer()).auth;
  });
  afterAll(() => t?.close());

  it('closes a connection that trickles its headers (slow-loris) at the headers deadline, with 408 in the envelope', async () => {
    const conn = await rawConnect(port);
    void trickle(conn, `GET /v1/webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\n${'X-Slow: a\r\n'.repeat(100)}\r\n`, 100);
    const after = await conn.closed;
    expect(after).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
    expect(after).toBeLessThan(HEADERS_TIMEOUT_MS + SLACK_MS);
    expect(conn.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(conn.received()).toContain('"code":"REQUEST_TIMEOUT"');
  });

  it('closes a connection that sends nothing at all at the headers deadline', async () => {
    const conn = await rawConnect(port);
    const after = await conn.closed;
    expect(after).toBeLessThan(HEADERS_TIMEOUT_MS + SLACK_MS);
  });

  it('closes an authenticated request whose body trickles in at the request deadline', async () => {
    const conn = await rawConnect(port);
    const body = JSON.stringify({ url: 'https://hooks.example.com/slow', event: 'trends.surge', subreddit: 'slowbody' });
    conn.socket.write(
      `POST /v1/webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth.Authorization ? `Authorization: ${auth.Authorization}\r\n` : ''}` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    void trickle(conn, body, 100);
    const after = await conn.closed;
    expect(after).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
    expect(after).toBeLessThan(REQUEST_TIMEOUT_MS + SLACK_MS);
    expect(conn.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('answers an unauthenticated request 401 without waiting for its body, which is never buffered', async () => {
    const conn = await rawConnect(port);
    // 60 KB announced, none of it sent: a server that reads bodies before the key waits for them.
    conn.socket.write('POST /v1/webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer th_live_00000000000000000000000000000000\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n{"url":');
    const t0 = Date.now();
    while (!/\r\n\r\n/.test(conn.received()) && Date.now() - t0 < HEADERS_TIMEOUT_MS / 2) await new Promise((r) => setTimeout(r, 10));
    expect(conn.received()).toMatch(/^HTTP\/1\.1 401 /);
    conn.socket.destroy();
    // The same without any key.
    const res = await new Promise<string>((resolve) => {
      void rawConnect(port).then((c) => {
        c.socket.write('POST /v1/webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n');
        const started = Date.now();
        const poll = setInterval(() => {
          if (/\r\n\r\n/.test(c.received()) || Date.now() - started > HEADERS_TIMEOUT_MS / 2) {
            clearInterval(poll);
            c.socket.destroy();
            resolve(c.received());
          }
        }, 10);
      });
    });
    expect(res).toMatch(/^HTTP\/1\.1 401 /);
  });

  it('still reads and checks the body of an authenticated request', async () => {
    const bad = await t.http().post('/v1/webhooks').set(auth).set('Content-Type', 'application/json').send('{"url":');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_JSON');
    const big = await t.http().post('/v1/webhooks').set(auth).set('Content-Type', 'application/json').send(`{"url":"${'a'.repeat(70_000)}"}`);
    expect(big.status).toBe(413);
    const ok = await t.http().post('/v1/webhooks').set(auth).send({ url: 'https://hooks.example.com/slow', event: 'trends.surge', subreddit: 'slowbody' });
    expect(ok.status).toBe(201);
  });

  it(`holds at most ${MAX_CONNECTIONS} connections, and serves again once they are gone`, async () => {
    const held = await Promise.all(Array.from({ length: MAX_CONNECTIONS }, () => rawConnect(port)));
    // The next one is closed at once, unanswered.
    const extra = await rawConnect(port);
    const closedAfter = await Promise.race([extra.closed, new Promise<number>((r) => setTimeout(() => r(-1), HEADERS_TIMEOUT_MS / 2))]);
    expect(closedAfter).toBeGreaterThanOrEqual(0);
    expect(extra.received()).toBe('');
    for (const c of held) c.socket.destroy();
    await Promise.all(held.map((c) => c.closed));
    const res = await rawRequest(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    expect(res.status).toBe(200);
  });
});
