import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiKeyService } from '../src/auth/api-key.service';
import { testTargets } from './support/databases';
import { startTestApp, TestApp } from './support/app';

const ULID_RE = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;
const ISO_MS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const valid = (over: Record<string, unknown> = {}) => ({
  url: 'https://hooks.example.com/trendhooks',
  event: 'trends.surge',
  subreddit: 'typescript',
  ...over,
});

/** Every error answer: the spec 2.4 envelope and the request id echoed in the header. */
function expectError(res: { status: number; body: any; headers: Record<string, string> }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
  expect(Object.keys(res.body)).toEqual(['error']);
}

describe.each(testTargets())('webhooks API on %s', (_name, makeDb, adapter) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(makeDb(), {
      adapter,
      patch: (c) => {
        c.plans.business.maxWebhooks = 12;
      },
    });
  });
  afterAll(() => t?.close());

  describe('create', () => {
    it('creates a webhook and shows its secret exactly once', async () => {
      const c = await t.customer();
      const res = await t.http().post('/v1/webhooks').set(c.auth).send(valid({ subreddit: 'r/TypeScript', allow_nonstandard_port: false }));
      expect(res.status).toBe(201);
      expect(res.headers['x-request-id']).toBe(res.body.meta.request_id);
      expect(res.headers['x-ratelimit-limit']).toBe('1200');
      expect(res.body.meta).toEqual({ request_id: expect.any(String), page: null });
      const w = res.body.data;
      expect(w).toEqual({
        id: expect.stringMatching(ULID_RE),
        url: 'https://hooks.example.com/trendhooks',
        event: 'trends.surge',
        subreddit: 'typescript',
        allow_nonstandard_port: false,
        created_at: expect.stringMatching(ISO_MS_RE),
        last_delivery_at: null,
        last_status: null,
        last_response_code: null,
        // No attempt yet: no rate, no failures.
        success_rate_24h: null,
        consecutive_failures: 0,
        circuit: { state: 'closed', until: null, consecutive_failures: 0 },
        // Tracked from now on, not read yet (no poller runs here).
        source_status: 'pending',
        disabled: false,
        disabled_reason: null,
        disabled_at: null,
        disabled_deliveries: null,
        resumed: null,
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      });

      const got = await t.http().get(`/v1/webhooks/${w.id}`).set(c.auth);
      expect(got.status).toBe(200);
      expect(got.body.data.secret).toBeUndefined();
      expect(JSON.stringify(got.body)).not.toContain(w.secret);
      expect(got.body.data).toEqual({ ...w, secret: undefined });

      const list = await t.http().get('/v1/webhooks').set(c.auth);
      expect(list.status).toBe(200);
      expect(JSON.stringify(list.body)).not.toContain(w.secret);
      expect(list.body.data.every((x: object) => !('secret' in x))).toBe(true);

      expect(t.logs.lines.join('\n')).not.toContain(w.secret);
      expect(t.logs.lines.join('\n')).not.toContain(c.key);
    });

    it('accepts an IPv6 destination and a non-standard port when allowed', async () => {
      const c = await t.customer();
      const v6 = await t.http().post('/v1/webhooks').set(c.auth).send(valid({ url: 'https://v6.example.com/x' }));
      expect(v6.status).toBe(201);
      const port = await t.http().post('/v1/webhooks').set(c.auth).send(valid({ url: 'https://hooks.example.com:8443/x', allow_nonstandard_port: true }));
      expect(port.status).toBe(201);
      expect(port.body.data.allow_nonstandard_port).toBe(true);
    });

    it.each([
      [{ url: undefined }, 'url'],
      [{ event: undefined }, 'event'],
      [{ subreddit: undefined }, 'subreddit'],
      [{ url: 42 }, 'url'],
      [{ url: 'http://hooks.example.com/' }, 'url'],
      [{ url: 'hooks.example.com/path' }, 'url'],
      [{ url: '/relative' }, 'url'],
      [{ url: 'https://user:pass@hooks.example.com/' }, 'url'],
      [{ url: 'https://user@hooks.example.com/' }, 'url'],
      [{ url: 'LONG' }, 'url'],
      [{ event: 'trends.other' }, 'event'],
      [{ event: ['trends.surge'] }, 'event'],
      [{ subreddit: 'ab' }, 'subreddit'],
      [{ subreddit: '_underscore' }, 'subreddit'],
      [{ subreddit: 'a'.repeat(22) }, 'subreddit'],
      [{ subreddit: 'has space' }, 'subreddit'],
      [{ allow_nonstandard_port: 'yes' }, 'allow_nonstandard_port'],
      [{ extra: 1 }, 'extra'],
      [{ secret: 'whsec_mine' }, 'secret'],
      [JSON.parse('{"__proto__": {"admin": true}}'), '__proto__'],
    ])('rejects %j with 400 VALIDATION_ERROR naming %s', async (over: Record<string, unknown>, field) => {
      const c = await t.customer();
      // 'LONG' stands for a URL one character over the 2048 limit (kept out of the test title).
      const body = { ...valid(), ...over, ...(over.url === 'LONG' ? { url: `https://hooks.example.com/${'a'.repeat(2049 - 26)}` } : {}) };
      for (const [k, v] of Object.entries(over)) if (v === undefined) delete (body as Record<string, unknown>)[k];
      const res = await t.http().post('/v1/webhooks').set(c.auth).set('Content-Type', 'application/json').send(JSON.stringify(body));
      expectError(res, 400, 'VALIDATION_ERROR');
      expect(res.body.error.message).toContain(field);
    });

    it.each([
      [{ url: 123 }, 'url must be a string'],
      [{ url: true }, 'url must be a string'],
      [{ subreddit: 123 }, 'subreddit must be a string'],
      [{ allow_nonstandard_port: 1 }, 'allow_nonstandard_port must be a boolean'],
    ])('answers %j with the type the field must have, not a rule about its content', async (over, message) => {
      const c = await t.customer();
      const res = await t.http().post('/v1/webhooks').set(c.auth).send({ ...valid(), ...over });
      expectError(res, 400, 'VALIDATION_ERROR');
      expect(res.body.error.message).toBe(message);
    });

    it.each([
      ['[1,2]', 'VALIDATION_ERROR'],
      ['"a string"', 'VALIDATION_ERROR'],
      ['null', 'VALIDATION_ERROR'],
      ['{"url": ', 'INVALID_JSON'],
      ['{\'url\': 1}', 'INVALID_JSON'],
      [' ', 'INVALID_JSON'],
    ])('rejects the body %j', async (raw, code) => {
      const c = await t.customer();
      const res = await t.http().post('/v1/webhooks').set(c.auth).set('Content-Type', 'application/json').send(raw);
      expectError(res, 400, code);
    });

    it('rejects a body that is not JSON with 415', async () => {
      const c = await t.customer();
      const res = await t.http().post('/v1/webhooks').set(c.auth).set('Content-Type', 'text/plain').send('url=https://x');
      expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
      const form = await t.http().post('/v1/webhooks').set(c.auth).type('form').send({ url: 'https://hooks.example.com/' });
      expectError(form, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('rejects a body over 64 KiB with 413', async () => {
      const c = await t.customer();
      const res = await t.http().post('/v1/webhooks').set(c.auth).send({ ...valid(), pad: 'x'.repeat(70 * 1024) });
      expectError(res, 413, 'PAYLOAD_TOO_LARGE');
    });

    it.each([
      ['https://127.0.0.1/', '127.0.0.1'],
      ['https://localhost/', 'localhost'],
      ['https://[::1]/', '::1'],
      ['https://169.254.169.254/latest/meta-data', '169.254.169.254'],
      ['https://metadata.google.internal/', 'metadata.google.internal'],
      ['https://10.1.2.3/', '10.1.2.3'],
      ['https://0x7f000001/', '127.0.0.1'],
      ['https://[::ffff:127.0.0.1]/', '127.0.0.1'],
      ['https://internal.example.com/', '10.0.0.5'],
      ['https://mixed.example.com/', '192.168.1.20'],
      ['https://nowhere.example.com/', 'nowhere.example.com'],
      ['https://hooks.example.com:8443/', '8443'],
    ])('refuses the destination %s with 422 naming %s', async (url, named) => {
      const c = await t.customer();
      const res = await t.http().post('/v1/webhooks').set(c.auth).send(valid({ url }));
      expectError(res, 422, 'WEBHOOK_DESTINATION_BLOCKED');
      expect(res.body.error.message).toContain(named);
    });

    it('enforces the plan quota with 403 WEBHOOK_QUOTA_EXCEEDED, also under concurrent creates', async () => {
      const c = await t.customer();
      const results = await Promise.all(Array.from({ length: 16 }, () => t.http().post('/v1/webhooks').set(c.auth).send(valid())));
      expect(results.filter((r) => r.status === 201)).toHaveLength(12);
      for (const r of results.filter((r) => r.status !== 201)) expectError(r, 403, 'WEBHOOK_QUOTA_EXCEEDED');
      const list = await t.http().get('/v1/webhooks?limit=100').set(c.auth);
      expect(list.body.data).toHaveLength(12);
    });
  });

  describe('auth and plans', () => {
    it.each([
      [{}],
      [{ Authorization: 'th_live_abc' }],
      [{ Authorization: 'Basic dXNlcjpwYXNz' }],
      [{ Authorization: 'Bearer ' }],
      [{ Authorization: 'Bearer th_live_' + 'a'.repeat(38) }],
      [{ Authorization: 'Bearer th_live_' + 'a'.repeat(3000) }],
    ])('answers 401 UNAUTHORIZED with WWW-Authenticate (case %#)', async (headers) => {
      for (const [method, path] of [['get', '/v1/webhooks'], ['post', '/v1/webhooks'], ['get', '/v1/webhooks/01ARZ3NDEKTSV4RRFFQ69G5FAV'], ['delete', '/v1/webhooks/01ARZ3NDEKTSV4RRFFQ69G5FAV']] as const) {
        const res = await t.http()[method](path).set(headers);
        expectError(res, 401, 'UNAUTHORIZED');
        expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
        expect(res.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
      }
    });

    it('answers 401 for a well-formed key that was never issued, and for a revoked key', async () => {
      const c = await t.customer();
      expect((await t.http().get('/v1/webhooks').set(c.auth)).status).toBe(200);
      expect(await t.app.get(ApiKeyService).revoke(c.prefix)).toBe(1);
      expectError(await t.http().get('/v1/webhooks').set(c.auth), 401, 'UNAUTHORIZED');
      const other = await t.customer();
      const forged = other.key.slice(0, -7) + (other.key.at(-7) === 'a' ? 'b' : 'a') + other.key.slice(-6);
      expectError(await t.http().get('/v1/webhooks').set({ Authorization: `Bearer ${forged}` }), 401, 'UNAUTHORIZED');
    });

    it.each(['free', 'pro'] as const)('answers 403 PLAN_REQUIRED on every webhook route for the %s plan', async (plan) => {
      const c = await t.customer(plan);
      for (const res of [
        await t.http().post('/v1/webhooks').set(c.auth).send(valid()),
        await t.http().get('/v1/webhooks').set(c.auth),
        await t.http().get('/v1/webhooks/01ARZ3NDEKTSV4RRFFQ69G5FAV').set(c.auth),
        await t.http().delete('/v1/webhooks/01ARZ3NDEKTSV4RRFFQ69G5FAV').set(c.auth),
      ]) {
        expectError(res, 403, 'PLAN_REQUIRED');
        expect(res.headers['x-ratelimit-limit']).toBe(plan === 'free' ? '60' : '300');
      }
    });

    it('lets the enterprise plan in with its own rate limit', async () => {
      const c = await t.customer('enterprise');
      const res = await t.http().get('/v1/webhooks').set(c.auth);
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('6000');
    });
  });

  describe('get and delete', () => {
    it('answers 400 VALIDATION_ERROR for a webhook_id that is not a ULID', async () => {
      const c = await t.customer();
      for (const id of ['nope', '01ARZ3NDEKTSV4RRFFQ69G5FA', '01ARZ3NDEKTSV4RRFFQ69G5FAVX', '81ARZ3NDEKTSV4RRFFQ69G5FAV', '01ARZ3NDEKTSV4RRFFQ69G5FAU', '%00']) {
        expectError(await t.http().get(`/v1/webhooks/${id}`).set(c.auth), 400, 'VALIDATION_ERROR');
        expectError(await t.http().delete(`/v1/webhooks/${id}`).set(c.auth), 400, 'VALIDATION_ERROR');
      }
    });

    it('answers 404 for an absent webhook and for another customer\'s', async () => {
      const a = await t.customer();
      const b = await t.customer();
      const created = await t.http().post('/v1/webhooks').set(a.auth).send(valid());
      expectError(await t.http().get('/v1/webhooks/01ARZ3NDEKTSV4RRFFQ69G5FAV').set(a.auth), 404, 'NOT_FOUND');
      expectError(await t.http().get(`/v1/webhooks/${created.body.data.id}`).set(b.auth), 404, 'NOT_FOUND');
      // Crockford is case-insensitive: the lower-case id names the same webhook.
      expect((await t.http().get(`/v1/webhooks/${created.body.data.id.toLowerCase()}`).set(a.auth)).status).toBe(200);
    });

    it('deletes idempotently with 204 and never touches another customer\'s webhook', async () => {
      const a = await t.customer();
      const b = await t.customer();
      const id = (await t.http().post('/v1/webhooks').set(a.auth).send(valid())).body.data.id;

      const foreign = await t.http().delete(`/v1/webhooks/${id}`).set(b.auth);
      expect(foreign.status).toBe(204);
      expect(foreign.text).toBe('');
      expect((await t.http().get(`/v1/webhooks/${id}`).set(a.auth)).status).toBe(200);

      const first = await t.http().delete(`/v1/webhooks/${id}`).set(a.auth);
      expect(first.status).toBe(204);
      expect(first.headers['x-request-id']).toBeTruthy();
      expect(first.headers['x-ratelimit-limit']).toBe('1200');
      expect((await t.http().delete(`/v1/webhooks/${id}`).set(a.auth)).status).toBe(204);
      expectError(await t.http().get(`/v1/webhooks/${id}`).set(a.auth), 404, 'NOT_FOUND');
    });
  });

  describe('list and cursors', () => {
    async function seeded(n: number) {
      const c = await t.customer();
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push((await t.http().post('/v1/webhooks').set(c.auth).send(valid({ subreddit: `sub_${i}x` }))).body.data.id);
      return { c, newestFirst: ids.reverse() };
    }

    it('pages newest first with next and prev cursors, and only the caller\'s webhooks', async () => {
      const { c, newestFirst } = await seeded(7);
      const other = await t.customer();
      await t.http().post('/v1/webhooks').set(other.auth).send(valid());

      const p1 = await t.http().get('/v1/webhooks?limit=3').set(c.auth);
      expect(p1.status).toBe(200);
      expect(p1.body.meta.page).toEqual({ limit: 3, next_cursor: expect.any(String), prev_cursor: null });
      expect(p1.body.data.map((w: { id: string }) => w.id)).toEqual(newestFirst.slice(0, 3));

      const p2 = await t.http().get('/v1/webhooks').query({ limit: 3, cursor: p1.body.meta.page.next_cursor }).set(c.auth);
      expect(p2.body.data.map((w: { id: string }) => w.id)).toEqual(newestFirst.slice(3, 6));
      expect(p2.body.meta.page.prev_cursor).toEqual(expect.any(String));

      const p3 = await t.http().get('/v1/webhooks').query({ limit: 3, cursor: p2.body.meta.page.next_cursor }).set(c.auth);
      expect(p3.body.data.map((w: { id: string }) => w.id)).toEqual(newestFirst.slice(6));
      expect(p3.body.meta.page.next_cursor).toBeNull();

      const back = await t.http().get('/v1/webhooks').query({ limit: 3, cursor: p2.body.meta.page.prev_cursor }).set(c.auth);
      expect(back.body.data.map((w: { id: string }) => w.id)).toEqual(newestFirst.slice(0, 3));
      expect(back.body.meta.page.prev_cursor).toBeNull();
    });

    it('defaults to 25 and answers 400 BAD_REQUEST for a bad limit, naming the maximum', async () => {
      const c = await t.customer();
      expect((await t.http().get('/v1/webhooks').set(c.auth)).body.meta.page.limit).toBe(25);
      expect((await t.http().get('/v1/webhooks?limit=100').set(c.auth)).status).toBe(200);
      for (const bad of ['0', '-1', '101', '1.5', 'abc', '', '1e2', '25&limit=26']) {
        const res = await t.http().get(`/v1/webhooks?limit=${bad}`).set(c.auth);
        expectError(res, 400, 'BAD_REQUEST');
        expect(res.body.error.message).toContain('100');
      }
    });

    it('answers 400 INVALID_CURSOR for empty, malformed, tampered and foreign cursors', async () => {
      const { c } = await seeded(3);
      const p1 = await t.http().get('/v1/webhooks?limit=1').set(c.auth);
      const cursor: string = p1.body.meta.page.next_cursor;
      const flipped = cursor.slice(0, 5) + (cursor[5] === 'A' ? 'B' : 'A') + cursor.slice(6);
      for (const bad of ['', 'garbage', flipped, cursor.slice(0, -2), cursor + 'x', 'a'.repeat(5000)]) {
        expectError(await t.http().get('/v1/webhooks').query({ cursor: bad }).set(c.auth), 400, 'INVALID_CURSOR');
      }
      const other = await t.customer();
      const foreign = await t.http().get('/v1/webhooks').query({ cursor }).set(other.auth);
      expectError(foreign, 400, 'INVALID_CURSOR');
      expect(foreign.body.error.message).toContain('customer');
    });
  });

  describe('envelope', () => {
    it('answers an unknown route with 404 NOT_FOUND in the envelope', async () => {
      for (const path of ['/nope', '/v1/nope', '/v2/webhooks']) {
        expectError(await t.http().get(path), 404, 'NOT_FOUND');
      }
      expectError(await t.http().put('/v1/webhooks'), 404, 'NOT_FOUND');
    });

    it('echoes a sane caller X-Request-Id and replaces an unsafe one', async () => {
      const ok = await t.http().get('/nope').set('X-Request-Id', 'client-req-123456');
      expect(ok.headers['x-request-id']).toBe('client-req-123456');
      const unsafe = await t.http().get('/nope').set('X-Request-Id', 'bad id with spaces');
      expect(unsafe.headers['x-request-id']).toMatch(/^req_/);
      expect(unsafe.body.error.request_id).toBe(unsafe.headers['x-request-id']);
    });

    it('runs on the HTTP adapter it was configured with', () => {
      expect(t.app.getHttpAdapter().getType()).toBe(adapter);
    });

    it('answers the same to a malformed Content-Type, and to bodies on routes that read none', async () => {
      const c = await t.customer();
      expectError(await t.http().post('/v1/webhooks').set(c.auth).set('Content-Type', 'nonsense').send('{}'), 415, 'UNSUPPORTED_MEDIA_TYPE');
      const charset = await t.http().post('/v1/webhooks').set(c.auth).set('Content-Type', 'application/json; charset=utf-8').send(JSON.stringify(valid()));
      expect(charset.status).toBe(201);
      // The webhook routes read JSON only; the delivery routes take no body and ignore one.
      const w = charset.body.data;
      expectError(await t.http().post(`/v1/webhooks/${w.id}/rotate-secret`).set(c.auth).set('Content-Type', 'text/plain').send('x'), 415, 'UNSUPPORTED_MEDIA_TYPE');
      const retry = await t.http().post(`/v1/webhooks/${w.id}/deliveries/msg_0123456789abcdefghjkmnpqrs/retry`).set(c.auth).set('Content-Type', 'text/plain').send('x');
      expectError(retry, 404, 'NOT_FOUND');
    });

    it('serves /healthz and /readyz without auth', async () => {
      expect((await t.http().get('/healthz')).body).toEqual({ status: 'ok' });
      expect((await t.http().get('/readyz')).status).toBe(200);
    });
  });
});

describe.each(testTargets())('failure modes on %s', (_name, makeDb, adapter) => {
  it('answers 429 RATE_LIMITED with Retry-After past the plan limit', async () => {
    const t = await startTestApp(makeDb(), { adapter, env: { PLAN_RATE_LIMITS: 'business=3' } });
    try {
      const c = await t.customer();
      const statuses = [];
      for (let i = 0; i < 4; i++) {
        const res = await t.http().get('/v1/webhooks').set(c.auth);
        statuses.push(res.status);
        expect(res.headers['x-ratelimit-limit']).toBe('3');
        expect(res.headers['x-ratelimit-remaining']).toBe(String(Math.max(0, 2 - i)));
        if (res.status === 429) {
          expectError(res, 429, 'RATE_LIMITED');
          expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
        }
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      // Another customer has a budget of its own.
      expect((await t.http().get('/v1/webhooks').set((await t.customer()).auth)).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('counts an unknown /v1 route against the caller like any /v1 request, with the rate-limit headers', async () => {
    const t = await startTestApp(makeDb(), { adapter, env: { PLAN_RATE_LIMITS: 'business=3' } });
    try {
      const c = await t.customer();
      const limited = (res: { headers: Record<string, string> }, limit: number, remaining: number) => {
        expect({ limit: res.headers['x-ratelimit-limit'], remaining: res.headers['x-ratelimit-remaining'] }).toEqual({ limit: String(limit), remaining: String(remaining) });
        expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
        expect(res.headers['ratelimit-policy']).toBe(`"default";q=${limit};w=60`);
        expect(res.headers.ratelimit).toMatch(new RegExp(`^"default";r=${remaining};t=\\d+$`));
      };
      const unknown = await t.http().get('/v1/nope').set(c.auth);
      expectError(unknown, 404, 'NOT_FOUND');
      limited(unknown, 3, 2);
      const method = await t.http().put('/v1/webhooks').set(c.auth);
      expectError(method, 404, 'NOT_FOUND');
      limited(method, 3, 1);
      limited(await t.http().get('/v1/webhooks').set(c.auth), 3, 0);
      // Past the limit an unknown route is refused as a known one is.
      const over = await t.http().get('/v1/nope/deeper?x=1').set(c.auth);
      expectError(over, 429, 'RATE_LIMITED');
      limited(over, 3, 0);
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
      expect((await t.http().get('/v1/webhooks').set(c.auth)).status).toBe(429);

      // Without a valid key: charged to the client address (60 a minute), as a failed authentication is; still a 404.
      const anonymous = await t.http().get('/v1/nope');
      expectError(anonymous, 404, 'NOT_FOUND');
      limited(anonymous, 60, 59);
      const badKey = await t.http().get('/v1').set({ Authorization: 'Bearer th_live_nope' });
      expectError(badKey, 404, 'NOT_FOUND');
      limited(badKey, 60, 58);
      limited(await t.http().get('/v1/webhooks'), 60, 57);
      // Outside /v1 nothing is counted.
      const outside = await t.http().get('/v1nope').set(c.auth);
      expectError(outside, 404, 'NOT_FOUND');
      expect(outside.headers['x-ratelimit-limit']).toBeUndefined();
    } finally {
      await t.close();
    }
  });

  it('answers 400 INVALID_CURSOR for an expired cursor', async () => {
    const t = await startTestApp(makeDb(), { adapter, env: { CURSOR_TTL_SECONDS: '1' } });
    try {
      const c = await t.customer();
      for (let i = 0; i < 2; i++) await t.http().post('/v1/webhooks').set(c.auth).send(valid());
      const cursor = (await t.http().get('/v1/webhooks?limit=1').set(c.auth)).body.meta.page.next_cursor;
      await new Promise((r) => setTimeout(r, 2100));
      const res = await t.http().get('/v1/webhooks').query({ cursor }).set(c.auth);
      expectError(res, 400, 'INVALID_CURSOR');
      expect(res.body.error.message).toContain('expired');
    } finally {
      await t.close();
    }
  });

  it('answers 500 INTERNAL_ERROR without internals when the database breaks', async () => {
    const t = await startTestApp(makeDb(), { adapter });
    try {
      const c = await t.customer();
      await t.app.get<DataSource>(getDataSourceToken()).query('DROP TABLE webhook_subscriptions');
      const res = await t.http().get('/v1/webhooks').set(c.auth);
      expectError(res, 500, 'INTERNAL_ERROR');
      expect(res.body.error.message).toBe('internal error');
      expect(res.text).not.toMatch(/webhook_subscriptions|SELECT|relation|no such table|\.ts|node_modules|at /i);
      // It is logged for operators, under the same request id.
      expect(t.logs.lines.some((l) => l.includes(res.body.error.request_id))).toBe(true);
    } finally {
      await t.close();
    }
  });
});
