import { INestApplication } from '@nestjs/common';
import { ModulesContainer, NestFactory } from '@nestjs/core';
import { getDataSourceToken } from '@nestjs/typeorm';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { ApiKeyService, ApiKeysModule } from '../src/index';
import { testDatabases, TestDatabase } from './support/databases';
import { TEST_DNS } from './support/app';
import { HostAuthAppModule, HostDirectory } from './host-app/host-auth.module';

const valid = (over: Record<string, unknown> = {}) => ({ url: 'https://hooks.example.com/h', event: 'trends.surge', subreddit: 'typescript', ...over });

/** trendhooks' own error envelope, with the request id echoed in the header. */
function expectTrendhooksError(res: request.Response, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(Object.keys(res.body)).toEqual(['error']);
  expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
}

describe.each(testDatabases())("trendhooks behind a host app's own identity on %s", (_name, makeDb) => {
  let db: TestDatabase;
  let app: INestApplication;
  let ds: DataSource;
  let directory: HostDirectory;
  let http: () => ReturnType<typeof request>;
  const as = (token: string) => ({ 'X-Host-User': token });

  beforeAll(async () => {
    db = makeDb();
    const database = await db.create();
    // The host's schema (migrationsRun): trendhooks' core, settings and posts features, no API-key tables.
    app = await NestFactory.create(HostAuthAppModule.forRoot(database, TEST_DNS), { bodyParser: false, logger: false, abortOnError: false });
    await app.init();
    http = () => request(app.getHttpServer());
    ds = app.get(getDataSourceToken());
    directory = app.get(HostDirectory);
    directory.addUser('tok-ada', { id: 'ada', tenantId: 'acme' }, 'business');
    directory.addUser('tok-bob', { id: 'bob', tenantId: 'acme' }, 'business');
    directory.addUser('tok-cy', { id: 'cy', tenantId: 'globex' }, 'enterprise');
    directory.addUser('tok-fay', { id: 'fay', tenantId: 'freeco' }, 'free');
    directory.addUser('tok-pat', { id: 'pat', tenantId: 'proco' }, 'pro');
    directory.addUser('tok-quinn', { id: 'quinn', tenantId: 'quota-co' }, 'business');
    directory.addUser('tok-long', { id: 'long', tenantId: 't'.repeat(41) }, 'business');
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('runs with no API-key module, service or tables; only the host registers a global guard', async () => {
    expect(() => app.get(ApiKeyService)).toThrow();
    expect(() => app.get(ApiKeysModule)).toThrow();
    const tables = (await ds.query(ds.options.type === 'postgres' ? "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'" : "SELECT name FROM sqlite_master WHERE type = 'table'")).map((r: { name: string }) => r.name);
    expect(tables).toEqual(expect.arrayContaining(['webhooks', 'deliveries']));
    expect(tables).not.toEqual(expect.arrayContaining(['customers']));
    expect(tables).not.toEqual(expect.arrayContaining(['api_keys']));
    const owners: string[] = [];
    for (const mod of app.get(ModulesContainer).values()) {
      for (const token of mod.providers.keys()) if (typeof token === 'string' && /^APP_(GUARD|PIPE|FILTER|INTERCEPTOR)/.test(token)) owners.push(mod.metatype.name);
    }
    expect([...new Set(owners)]).toEqual(['HostAuthAppModule']);
  });

  it("creates, lists, gets, rotates and deletes webhooks as the host's tenant; users of one tenant share them", async () => {
    const created = await http().post('/v1/webhooks').set(as('tok-ada')).send(valid());
    expect(created.status).toBe(201);
    expect(created.headers['x-ratelimit-limit']).toBe('200');
    const w = created.body.data;
    expect(await ds.query(`SELECT customer_id FROM webhooks WHERE id = '${w.id}'`)).toEqual([{ customer_id: 'acme' }]);

    // bob is another user of the same tenant: he sees and manages acme's webhook.
    const got = await http().get(`/v1/webhooks/${w.id}`).set(as('tok-bob'));
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual({ ...w, secret: undefined });
    const listed = await http().get('/v1/webhooks').set(as('tok-bob'));
    expect(listed.body.data.map((x: { id: string }) => x.id)).toEqual([w.id]);
    const rotated = await http().post(`/v1/webhooks/${w.id}/rotate-secret`).set(as('tok-bob'));
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.secret).toMatch(/^whsec_/);

    const sent = await http().post(`/v1/webhooks/${w.id}/test`).set(as('tok-ada'));
    expect(sent.status).toBe(202);
    expect(await ds.query(`SELECT customer_id FROM deliveries WHERE id = '${sent.body.data.delivery_id}'`)).toEqual([{ customer_id: 'acme' }]);

    expect((await http().delete(`/v1/webhooks/${w.id}`).set(as('tok-ada'))).status).toBe(204);
    expectTrendhooksError(await http().get(`/v1/webhooks/${w.id}`).set(as('tok-bob')), 404, 'NOT_FOUND');
  });

  it("keeps tenants apart: another tenant's webhooks, deliveries and cursors are not found", async () => {
    const a = (await http().post('/v1/webhooks').set(as('tok-ada')).send(valid())).body.data;
    await http().post('/v1/webhooks').set(as('tok-ada')).send(valid({ subreddit: 'node' }));
    for (const path of [`/v1/webhooks/${a.id}`, `/v1/webhooks/${a.id}/deliveries`]) {
      expectTrendhooksError(await http().get(path).set(as('tok-cy')), 404, 'NOT_FOUND');
    }
    // Delete is idempotent (204 for a webhook that is not the caller's), and deletes nothing of another tenant's.
    expect((await http().delete(`/v1/webhooks/${a.id}`).set(as('tok-cy'))).status).toBe(204);
    expectTrendhooksError(await http().post(`/v1/webhooks/${a.id}/rotate-secret`).set(as('tok-cy')), 404, 'NOT_FOUND');
    expect((await http().get('/v1/webhooks').set(as('tok-cy'))).body.data).toEqual([]);

    const page1 = await http().get('/v1/webhooks?limit=1').set(as('tok-ada'));
    const cursor = page1.body.meta.page.next_cursor;
    expect(cursor).toEqual(expect.any(String));
    expectTrendhooksError(await http().get('/v1/webhooks').query({ limit: 1, cursor }).set(as('tok-cy')), 400, 'INVALID_CURSOR');
    expect((await http().get('/v1/webhooks').query({ limit: 1, cursor }).set(as('tok-bob'))).status).toBe(200);
    // Still there for its own tenant, after globex's delete.
    expect((await http().get(`/v1/webhooks/${a.id}`).set(as('tok-ada'))).status).toBe(200);
  });

  it("answers 401 in trendhooks' envelope when the host knows no user, and leaves the host's own routes to the host", async () => {
    for (const headers of [{}, as('tok-nobody')]) {
      const res = await http().get('/v1/webhooks').set(headers);
      expectTrendhooksError(res, 401, 'UNAUTHORIZED');
      expect(res.headers['www-authenticate']).toBe('Bearer realm="trendhooks"');
      expect(res.headers['x-ratelimit-limit']).toBe('60');
    }
    expect((await http().get('/host/me').set(as('tok-ada'))).body).toEqual({ user: { id: 'ada', tenantId: 'acme' } });
    const hostRefusal = await http().get('/host/me');
    expect(hostRefusal.status).toBe(401);
    expect(hostRefusal.headers['x-request-id']).toBeUndefined();
  });

  it("refuses Business+ routes to a free-plan host tenant with PLAN_REQUIRED, follows the host's plan changes at once, and serves posts to every plan", async () => {
    const refused = await http().post('/v1/webhooks').set(as('tok-fay')).send(valid());
    expectTrendhooksError(refused, 403, 'PLAN_REQUIRED');
    expect(refused.body.error.message).toContain('your plan is free');
    expectTrendhooksError(await http().get('/v1/webhooks').set(as('tok-fay')), 403, 'PLAN_REQUIRED');
    const posts = await http().get('/v1/subreddits/typescript/posts').set(as('tok-fay'));
    expect(posts.status).toBe(200);
    expect(posts.body.meta.page).toEqual({ limit: 25, next_cursor: null });

    directory.tenantPlans.set('freeco', 'business');
    expect((await http().get('/v1/webhooks').set(as('tok-fay'))).status).toBe(200);
    directory.tenantPlans.set('freeco', 'free');
    expectTrendhooksError(await http().get('/v1/webhooks').set(as('tok-fay')), 403, 'PLAN_REQUIRED');
  });

  it("enforces the host plan's webhook quota per tenant", async () => {
    for (const subreddit of ['quota1', 'quota2']) expect((await http().post('/v1/webhooks').set(as('tok-quinn')).send(valid({ subreddit }))).status).toBe(201);
    const over = await http().post('/v1/webhooks').set(as('tok-quinn')).send(valid({ subreddit: 'quota3' }));
    expectTrendhooksError(over, 403, 'WEBHOOK_QUOTA_EXCEEDED');
    expect(await ds.query("SELECT COUNT(*) AS n FROM webhooks WHERE customer_id = 'quota-co'")).toEqual([{ n: ds.options.type === 'postgres' ? '2' : 2 }]);
    // The quota is the tenant's, not every tenant's: another business tenant still creates.
    directory.addUser('tok-quinn2', { id: 'quinn2', tenantId: 'quota-co-2' }, 'business');
    expect((await http().post('/v1/webhooks').set(as('tok-quinn2')).send(valid())).status).toBe(201);
  });

  it("rate-limits the host's tenant by its plan: X-RateLimit-* headers, then 429 RATE_LIMITED in the envelope", async () => {
    for (let i = 1; i <= 4; i++) {
      const ok = await http().get('/v1/subreddits/typescript/posts').set(as('tok-pat'));
      expect(ok.status).toBe(200);
      expect([ok.headers['x-ratelimit-limit'], ok.headers['x-ratelimit-remaining']]).toEqual(['4', String(4 - i)]);
    }
    const limited = await http().get('/v1/subreddits/typescript/posts').set(as('tok-pat'));
    expectTrendhooksError(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another tenant on the same plan has its own budget.
    directory.addUser('tok-pia', { id: 'pia', tenantId: 'proco-2' }, 'pro');
    expect((await http().get('/v1/subreddits/typescript/posts').set(as('tok-pia'))).status).toBe(200);
  });

  it("answers a resolver's unusable principal 500 in the envelope and stores nothing under it", async () => {
    const before = await ds.query('SELECT COUNT(*) AS n FROM webhooks');
    expectTrendhooksError(await http().post('/v1/webhooks').set(as('tok-long')).send(valid()), 500, 'INTERNAL_ERROR');
    expect(await ds.query('SELECT COUNT(*) AS n FROM webhooks')).toEqual(before);
    expect((await http().get('/v1/webhooks').set(as('tok-ada'))).status).toBe(200);
  });
});
