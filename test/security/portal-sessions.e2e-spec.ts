import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { testDatabases } from '../support/databases';
import { ShiftedClock, startTestApp, TestApp } from '../support/app';
import { createHmac } from 'node:crypto';
import { buildDeliveryBody } from '../../src/delivery/payload';
import { EVENT_CATALOGUE, EVENT_KINDS, EventKind, exampleFigures } from '../../src/events/catalogue';

/**
 * Portal links and sessions (issue #26): a link is used once, before it expires, from the portal
 * page only; the session it gives acts on the same /v1/webhooks routes as an API key, for its own
 * customer (or its one webhook) and nobody else's.
 */
const PORTAL = { 'X-Trendhooks-Portal': '1' };
const hook = (subreddit: string) => ({ url: 'https://hooks.example.com/trendhooks', event: 'trends.surge', subreddit });

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
}

describe.each(testDatabases())('portal sessions on %s', (_name, makeDb) => {
  let t: TestApp;
  const clock = new ShiftedClock();

  beforeAll(async () => {
    // Many exchanges from one address (127.0.0.1) here: the per-address limit has its own test and app below.
    t = await startTestApp(makeDb(), { clock, env: { PORTAL_EXCHANGES_PER_MINUTE: '1000' } });
  });
  afterAll(() => t?.close());
  afterEach(() => {
    clock.offsetMs = 0;
  });

  async function setup() {
    const a = await t.customer();
    const b = await t.customer();
    const aHook = (await t.http().post('/v1/webhooks').set(a.auth).send(hook('typescript')).expect(201)).body.data;
    const aOther = (await t.http().post('/v1/webhooks').set(a.auth).send(hook('rust')).expect(201)).body.data;
    const bHook = (await t.http().post('/v1/webhooks').set(b.auth).send(hook('golang')).expect(201)).body.data;
    return { a, b, aHook, aOther, bHook };
  }

  async function mint(auth: Record<string, string>, body?: object) {
    const res = await t.http().post('/v1/portal/sessions').set(auth).send(body);
    expect(res.status).toBe(201);
    const token = new URL(res.body.data.url).hash.replace(/^#token=/, '');
    return { res, token };
  }

  async function exchange(token: string) {
    const res = await t.http().post('/portal/session').set(PORTAL).send({ token });
    expect(res.status).toBe(200);
    const cookie = String(res.headers['set-cookie']).split(';')[0];
    return { res, cookie, as: { ...PORTAL, Cookie: cookie } };
  }

  it('mints a link for the calling customer: Business+, the token in the fragment, an hour to use it', async () => {
    const { a } = await setup();
    const { res, token } = await mint(a.auth);
    const url = new URL(res.body.data.url);
    expect(url.pathname).toBe('/portal');
    expect(url.search).toBe('');
    expect(token).toMatch(/^thpl_[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(res.body.data.expires_at) - Date.now()).toBeGreaterThan(3590_000);
    expect(Date.parse(res.body.data.expires_at) - Date.now()).toBeLessThanOrEqual(3600_000);

    const free = await t.customer('pro');
    expectError(await t.http().post('/v1/portal/sessions').set(free.auth).send({}), 403, 'PLAN_REQUIRED');
    expectError(await t.http().post('/v1/portal/sessions').send({}), 401, 'UNAUTHORIZED');
    expectError(await t.http().post('/v1/portal/sessions').set(a.auth).send({ webhook: 'x' }), 400, 'VALIDATION_ERROR');
  });

  it('exchanges the token once for an HttpOnly, Secure, SameSite=Strict cookie limited to the webhook routes', async () => {
    const { a, aHook, bHook } = await setup();
    const { token } = await mint(a.auth);
    const { res, as } = await exchange(token);
    const [setCookie, signOutCookie] = res.headers['set-cookie'] as unknown as string[];
    expect(setCookie).toMatch(/^th_portal=thps_[A-Za-z0-9_-]{43}; Path=\/v1\/webhooks; Max-Age=3600; HttpOnly; Secure; SameSite=Strict$/);
    // The same value for sign-out only (DELETE /portal/session), so it can name the session it ends.
    expect(signOutCookie).toBe(setCookie.replace('Path=/v1/webhooks', 'Path=/portal/session'));
    expect((res.headers['set-cookie'] as unknown as string[]).length).toBe(2);
    expect(res.body.data).toEqual({ customer_id: a.customerId, customer_name: expect.any(String), expires_at: expect.any(String), webhook_id: null });

    // The same list an API key gets: its own webhooks, not another customer's.
    const list = await t.http().get('/v1/webhooks').set(as).expect(200);
    const ids = list.body.data.map((w: { id: string }) => w.id);
    expect(ids).toContain(aHook.id);
    expect(ids).not.toContain(bHook.id);

    // Second use: refused, the same answer as an unknown token.
    const again = await t.http().post('/portal/session').set(PORTAL).send({ token });
    expectError(again, 401, 'UNAUTHORIZED');
    expect(again.headers['set-cookie']).toBeUndefined();
    expect(again.body.error.message).toMatch(/expired or was already used/);
  });

  it('refuses a tampered, unknown, malformed, expired or query-string token', async () => {
    const { a } = await setup();
    const { token } = await mint(a.auth);
    const flipped = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    expectError(await t.http().post('/portal/session').set(PORTAL).send({ token: flipped }), 401, 'UNAUTHORIZED');
    expectError(await t.http().post('/portal/session').set(PORTAL).send({ token: 'thpl_short' }), 401, 'UNAUTHORIZED');
    expectError(await t.http().post('/portal/session').set(PORTAL).send({}), 401, 'UNAUTHORIZED');
    expectError(await t.http().post('/portal/session').set(PORTAL).send({ token: 42 }), 401, 'UNAUTHORIZED');
    expectError(await t.http().post(`/portal/session?token=${token}`).set(PORTAL).send({}), 400, 'BAD_REQUEST');
    expectError(await t.http().post(`/portal/session?token=${token}`).set(PORTAL).send({ token }), 400, 'BAD_REQUEST');
    expectError(await t.http().post('/portal/session').set(PORTAL).set('Content-Type', 'text/plain').send(token), 415, 'UNSUPPORTED_MEDIA_TYPE');

    // Past its hour: refused, though never used.
    const late = await mint(a.auth);
    clock.offsetMs = 3600_000 + 1000;
    expectError(await t.http().post('/portal/session').set(PORTAL).send({ token: late.token }), 401, 'UNAUTHORIZED');
    clock.offsetMs = 0;
    // The query-string attempts did not use the first link up.
    await exchange(token);
  });

  it('refuses cross-site requests: the cookie without the portal header, a foreign Origin, Sec-Fetch-Site cross-site', async () => {
    const { a } = await setup();
    const { token } = await mint(a.auth);
    expectError(await t.http().post('/portal/session').send({ token }), 403, 'FORBIDDEN');
    expectError(await t.http().post('/portal/session').set(PORTAL).set('Origin', 'https://evil.example').send({ token }), 403, 'FORBIDDEN');
    expectError(await t.http().post('/portal/session').set(PORTAL).set('Sec-Fetch-Site', 'cross-site').send({ token }), 403, 'FORBIDDEN');
    const { cookie, as } = await exchange(token);
    // The cookie alone (what a cross-site form or image would send) is no credential.
    expectError(await t.http().get('/v1/webhooks').set('Cookie', cookie), 401, 'UNAUTHORIZED');
    expectError(await t.http().patch('/v1/webhooks/01JGXQ0Z6N3V4W5X6Y7Z8A9B0C').set('Cookie', cookie).send({ disabled: true }), 401, 'UNAUTHORIZED');
    for (const req of [
      t.http().get('/v1/webhooks').set(as).set('Origin', 'https://evil.example'),
      t.http().get('/v1/webhooks').set(as).set('Sec-Fetch-Site', 'same-site'),
      t.http().post('/v1/webhooks').set(as).set('Origin', 'null').send(hook('node')),
    ]) {
      expectError(await req, 403, 'FORBIDDEN');
    }
    // Its own origin is fine.
    const host = '127.0.0.1:9';
    await t.http().get('/v1/webhooks').set(as).set('Host', host).set('Origin', `http://${host}`).set('Sec-Fetch-Site', 'same-origin').expect(200);
  });

  it("refuses another customer's webhook id in every portal call, and changes nothing of it", async () => {
    const { a, b, bHook } = await setup();
    const { as } = await exchange((await mint(a.auth)).token);
    const id = bHook.id;
    const calls = [
      t.http().get(`/v1/webhooks/${id}`).set(as),
      t.http().patch(`/v1/webhooks/${id}`).set(as).send({ disabled: true }),
      t.http().post(`/v1/webhooks/${id}/rotate-secret`).set(as),
      t.http().get(`/v1/webhooks/${id}/deliveries`).set(as),
      t.http().post(`/v1/webhooks/${id}/deliveries/dlv_t5sjhza3k36pmzx225g3sfwfad/retry`).set(as),
      t.http().post(`/v1/webhooks/${id}/test`).set(as),
      t.http().post(`/v1/webhooks/${id}/recover`).set(as).send({ since: new Date(Date.now() - 3600_000).toISOString(), dry_run: true }),
    ];
    for (const call of calls) {
      const res = await call;
      expect([res.status, res.body?.error?.code]).toEqual([404, 'NOT_FOUND']);
    }
    // Delete is idempotent (204) and leaves another customer's webhook alone.
    await t.http().delete(`/v1/webhooks/${id}`).set(as).expect(204);
    const still = await t.http().get(`/v1/webhooks/${id}`).set(b.auth).expect(200);
    expect(still.body.data).toMatchObject({ id, disabled: false });
  });

  it('a link scoped to one webhook reaches that webhook only', async () => {
    const { a, aHook, aOther } = await setup();
    const { token } = await mint(a.auth, { webhook_id: aHook.id });
    const { res, as } = await exchange(token);
    expect(res.body.data.webhook_id).toBe(aHook.id);
    await t.http().get(`/v1/webhooks/${aHook.id}`).set(as).expect(200);
    await t.http().get(`/v1/webhooks/${aHook.id}/deliveries`).set(as).expect(200);
    expectError(await t.http().get(`/v1/webhooks/${aOther.id}`).set(as), 404, 'NOT_FOUND');
    expectError(await t.http().get(`/v1/webhooks/${aOther.id}/deliveries`).set(as), 404, 'NOT_FOUND');
    expectError(await t.http().get('/v1/webhooks').set(as), 403, 'FORBIDDEN');
    expectError(await t.http().post('/v1/webhooks').set(as).send(hook('node')), 403, 'FORBIDDEN');
    // Scoping to another customer's webhook is refused at minting.
    const b = await t.customer();
    const bHook = (await t.http().post('/v1/webhooks').set(b.auth).send(hook('golang')).expect(201)).body.data;
    expectError(await t.http().post('/v1/portal/sessions').set(a.auth).send({ webhook_id: bHook.id }), 404, 'NOT_FOUND');
  });

  it('a session cannot mint links, and ends when its hour is up', async () => {
    const { a } = await setup();
    const { as } = await exchange((await mint(a.auth)).token);
    expectError(await t.http().post('/v1/portal/sessions').set(as).send({}), 403, 'FORBIDDEN');
    clock.offsetMs = 3600_000 + 1000;
    const res = await t.http().get('/v1/webhooks').set(as);
    expectError(res, 401, 'UNAUTHORIZED');
    expect(res.body.error.message).toMatch(/portal session has expired/);
  });

  it('of two uses of one link at the same moment, exactly one gets a session', async () => {
    const { a } = await setup();
    for (let round = 0; round < 5; round++) {
      const { token } = await mint(a.auth);
      const answers = await Promise.all(Array.from({ length: 6 }, () => t.http().post('/portal/session').set(PORTAL).send({ token })));
      expect(answers.map((r) => r.status).sort()).toEqual([200, 401, 401, 401, 401, 401]);
    }
  });

  it('drops rows a day past their expiry when new links are minted', async () => {
    const { a } = await setup();
    const ds = t.app.get<DataSource>(getDataSourceToken());
    const count = async () => Number((await ds.query('SELECT COUNT(*) AS n FROM portal_sessions'))[0].n);
    await exchange((await mint(a.auth)).token);
    await mint(a.auth);
    const before = await count();
    expect(before).toBeGreaterThanOrEqual(2);
    clock.offsetMs = 3600_000 + 24 * 3600_000 + 1000;
    await mint(a.auth);
    expect(await count()).toBe(1);
  });

  it('sign-out ends the session server side: the old cookie no longer works, both cookies are cleared', async () => {
    const { a, aHook } = await setup();
    const { as } = await exchange((await mint(a.auth)).token);
    await t.http().get(`/v1/webhooks/${aHook.id}`).set(as).expect(200);

    // Not from the portal page: refused, and the session lives on.
    expectError(await t.http().delete('/portal/session').set({ Cookie: as.Cookie }), 403, 'FORBIDDEN');
    expectError(await t.http().delete('/portal/session').set({ ...as, Origin: 'https://evil.example.com' }), 403, 'FORBIDDEN');
    await t.http().get(`/v1/webhooks/${aHook.id}`).set(as).expect(200);

    const out = await t.http().delete('/portal/session').set(as);
    expect(out.status).toBe(204);
    const cleared = out.headers['set-cookie'] as unknown as string[];
    expect(cleared).toEqual([
      'th_portal=; Path=/v1/webhooks; Max-Age=0; HttpOnly; Secure; SameSite=Strict',
      'th_portal=; Path=/portal/session; Max-Age=0; HttpOnly; Secure; SameSite=Strict',
    ]);
    // The same cookie, kept by whoever copied it: dead on every route.
    const after = await t.http().get(`/v1/webhooks/${aHook.id}`).set(as);
    expectError(after, 401, 'UNAUTHORIZED');
    expectError(await t.http().get('/v1/webhooks').set(as), 401, 'UNAUTHORIZED');
    // Signing out again (or without a cookie) changes nothing and is no error.
    expect((await t.http().delete('/portal/session').set(as)).status).toBe(204);
    expect((await t.http().delete('/portal/session').set(PORTAL)).status).toBe(204);
  });

  it('serves the receiver contract of each kind: the catalogue example built as a delivery body, signed as a delivery is', async () => {
    const res = await t.http().get('/portal/contract').expect(200);
    expect(res.headers['content-security-policy']).toMatch(/^default-src 'none'/);
    const { kinds, example_secret, verify } = res.body.data as { kinds: { kind: string; body: string; headers: Record<string, string> }[]; example_secret: string; verify: string[] };
    expect(kinds.map((k) => k.kind)).toEqual([...EVENT_KINDS]);
    for (const k of kinds) {
      const ex = EVENT_CATALOGUE[k.kind as EventKind].example;
      expect(JSON.parse(k.body)).toEqual(ex);
      expect(k.body).toBe(buildDeliveryBody({ id: ex.data.event_id, type: k.kind, subreddit: ex.data.subreddit, createdAt: new Date(ex.timestamp), data: exampleFigures(k.kind as EventKind) }, ex.data.webhook_id));
      // Verified the way a receiver would, independently of the signer.
      const key = Buffer.from(example_secret.replace(/^whsec_/, ''), 'base64');
      const mac = createHmac('sha256', key).update(`${k.headers['webhook-id']}.${k.headers['webhook-timestamp']}.${k.body}`).digest('base64');
      expect(k.headers['webhook-signature']).toBe(`v1,${mac}`);
      expect(Number(k.headers['webhook-timestamp'])).toBe(Date.parse(ex.timestamp) / 1000);
    }
    expect(verify.join(' ')).toMatch(/constant time/);
  });
});

describe.each(testDatabases())('portal link exchanges are rate limited per client address on %s', (_name, makeDb) => {
  let t: TestApp;
  const clock = new ShiftedClock();

  beforeAll(async () => {
    // The default limit (30 a minute).
    t = await startTestApp(makeDb(), { clock });
  });
  afterAll(() => t?.close());

  it('answers 429 in the envelope with Retry-After past 30 refused tokens a minute, until the window passes; a valid token still goes through', async () => {
    const a = await t.customer();
    const mintToken = async () => new URL((await t.http().post('/v1/portal/sessions').set(a.auth).send({}).expect(201)).body.data.url).hash.replace(/^#token=/, '');
    const token = await mintToken();
    // Start of a fresh minute, so the 30 land in one window.
    const now = Date.now();
    clock.offsetMs = 60_000 - (now % 60_000) + 100;
    for (let i = 0; i < 30; i++) {
      const res = await t.http().post('/portal/session').set(PORTAL).send({ token: `thpl_${String(i).padStart(42, 'x')}` });
      expectError(res, 401, 'UNAUTHORIZED');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(29 - i));
    }
    const refused = await t.http().post('/portal/session').set(PORTAL).send({ token: 'garbage' });
    expectError(refused, 429, 'RATE_LIMITED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(refused.headers['set-cookie']).toBeUndefined();
    expect(refused.body.error.message).toMatch(/30 requests per minute/);
    // A well-formed token has its own, far larger budget (issue 38, finding 4).
    const ok = await t.http().post('/portal/session').set(PORTAL).send({ token });
    expect(ok.status).toBe(200);

    // The next minute: refused tokens are counted afresh.
    clock.offsetMs += 60_000;
    expectError(await t.http().post('/portal/session').set(PORTAL).send({ token: 'garbage' }), 401, 'UNAUTHORIZED');
  });
});
