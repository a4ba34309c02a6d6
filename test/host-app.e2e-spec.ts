import { INestApplication } from '@nestjs/common';
import { ModulesContainer, NestFactory } from '@nestjs/core';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import request from 'supertest';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ApiKeyService, CLOCK, TRENDHOOKS_DATA_SOURCE, TRENDHOOKS_OPENAPI_COMPONENTS } from '../src/index';
import { DeliveryWorker } from '../src/delivery/delivery.worker';
import { EventsService } from '../src/delivery/events.service';
import { PaginationService } from '../src/pagination/pagination.service';
import { testDatabases, TestDatabase } from './support/databases';
import { TEST_DNS } from './support/app';
import { HOST_CONNECTION, HOST_MIGRATIONS_TABLE, HostAppModule, HostClock, HostSettings } from './host-app/host.module';

const ULID = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
const ENVELOPE_ERROR = ['error'];

const SETTINGS: HostSettings = {
  cursorSecret: 'host-app-cursor-secret-0123456789abcdefghijkl',
  businessRequestsPerMinute: 77,
  dns: { ...TEST_DNS, 'denied.example.com': ['8.8.4.4'] },
  denyCidrs: '8.8.4.0/24',
  clock: new HostClock(),
};

const valid = (over: Record<string, unknown> = {}) => ({ url: 'https://hooks.example.com/h', event: 'trends.surge', subreddit: 'typescript', ...over });

/** trendhooks' own error envelope, with the request id echoed in the header. */
function expectTrendhooksError(res: request.Response, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(Object.keys(res.body)).toEqual(ENVELOPE_ERROR);
  expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
  expect(res.body.error.request_id).toBeTruthy();
}

describe.each(testDatabases())('trendhooks inside a host app on %s', (_name, makeDb) => {
  let db: TestDatabase;
  let app: INestApplication;
  let http: () => ReturnType<typeof request>;
  let n = 0;

  const customer = async (plan: 'free' | 'business' = 'business') => {
    const issued = await app.get(ApiKeyService).issue(`host-customer-${process.pid}-${n++}`, plan);
    return { Authorization: `Bearer ${issued.key}` };
  };

  beforeAll(async () => {
    db = makeDb();
    const database = await db.create();
    // The host reads bodies for its own routes only; trendhooks reads its own (JSON, 64 KiB).
    app = await NestFactory.create(HostAppModule.forRoot(database, SETTINGS), { bodyParser: false, logger: false, abortOnError: false });
    await app.init();
    http = () => request(app.getHttpServer());
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it("lives on the host's named connection, migrated in the host's own table with only the features it picked", async () => {
    const host = app.get<DataSource>(getDataSourceToken(HOST_CONNECTION));
    expect(app.get(TRENDHOOKS_DATA_SOURCE)).toBe(host);
    const tables = async (ds: DataSource): Promise<string[]> =>
      (
        (await ds.query(
          ds.options.type === 'postgres'
            ? 'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1'
            : "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY 1",
        )) as { name: string }[]
      ).map((r) => r.name);
    // Core, API keys and posts; no `settings` (the host configures the cursor secret), no trendhooks_migrations.
    expect(await tables(host)).toEqual(
      ['api_keys', 'customers', 'deliveries', 'delivery_attempts', 'destination_circuits', 'events', HOST_MIGRATIONS_TABLE, 'host_notes', 'operations_notifications', 'portal_sessions', 'posts', 'trend_sources', 'webhook_subscriptions', 'webhooks'].sort(),
    );
    const recorded: { name: string }[] = await host.query(`SELECT name FROM ${HOST_MIGRATIONS_TABLE} ORDER BY name`);
    expect(recorded.map((r) => r.name)).toEqual(['HostNotes1700000000000', expect.stringMatching(/^TrendhooksApiKeys\d+$/), expect.stringMatching(/^TrendhooksCore\d+$/), expect.stringMatching(/^TrendhooksDeliveriesKeyedById\d+$/), expect.stringMatching(/^TrendhooksDestinationCircuits\d+$/), expect.stringMatching(/^TrendhooksEventsBySubscription\d+$/), expect.stringMatching(/^TrendhooksOperationsNotifications\d+$/), expect.stringMatching(/^TrendhooksPortalSessionBudgets\d+$/), expect.stringMatching(/^TrendhooksPortalSessions\d+$/), expect.stringMatching(/^TrendhooksPosts\d+$/), expect.stringMatching(/^TrendhooksTrendSourcesUnreachable\d+$/), expect.stringMatching(/^TrendhooksWebhookLifecycle\d+$/), expect.stringMatching(/^TrendhooksWebhookSubscriptions\d+$/)]);
    // The host's default connection is another database: trendhooks created nothing there.
    expect(await tables(app.get<DataSource>(getDataSourceToken()))).toEqual([]);
  });

  it("gives every module the host's one clock", () => {
    const clock = app.get(CLOCK);
    expect(clock).toBe(SETTINGS.clock);
    expect(clock).toBeInstanceOf(HostClock);
    for (const service of [ApiKeyService, EventsService, DeliveryWorker, PaginationService]) {
      expect((app.get(service as never) as { clock: unknown }).clock).toBe(clock);
    }
  });

  it('registers no global guard, pipe, filter or interceptor of its own: only the host has APP_* providers', () => {
    const owners: string[] = [];
    for (const mod of app.get(ModulesContainer).values()) {
      for (const token of mod.providers.keys()) if (typeof token === 'string' && /^APP_(GUARD|PIPE|FILTER|INTERCEPTOR)/.test(token)) owners.push(mod.metatype.name);
    }
    expect([...new Set(owners)]).toEqual(['HostAppModule']);
  });

  it('creates, lists, gets and deletes a webhook; the secret is shown on create only', async () => {
    const auth = await customer();
    const created = await http().post('/v1/webhooks').set(auth).send(valid({ subreddit: 'r/TypeScript' }));
    expect(created.status).toBe(201);
    expect(created.headers['x-request-id']).toBe(created.body.meta.request_id);
    // AuthModule.forRootAsync: the host's plan figures are in force.
    expect(created.headers['x-ratelimit-limit']).toBe('77');
    const w = created.body.data;
    // No TrendsModule in this host: nothing reads Reddit, so nothing can say whether the subreddit is readable.
    expect(w).toMatchObject({ subreddit: 'typescript', secret: expect.stringMatching(/^whsec_/), source_status: null });

    const got = await http().get(`/v1/webhooks/${w.id}`).set(auth);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ data: { ...w, secret: undefined }, meta: { request_id: got.headers['x-request-id'], page: null } });
    expect(got.text).not.toContain(w.secret);

    await http().post('/v1/webhooks').set(auth).send(valid());
    const page1 = await http().get('/v1/webhooks?limit=1').set(auth);
    expect(page1.status).toBe(200);
    expect(page1.body.meta.page).toEqual({ limit: 1, next_cursor: expect.any(String), prev_cursor: null });
    expect(page1.text).not.toContain('whsec_');
    // PaginationModule.forRootAsync: cursors signed with the host's secret are accepted back.
    const page2 = await http().get('/v1/webhooks').query({ limit: 1, cursor: page1.body.meta.page.next_cursor }).set(auth);
    expect(page2.body.data.map((x: { id: string }) => x.id)).toEqual([w.id]);

    const del = await http().delete(`/v1/webhooks/${w.id}`).set(auth);
    expect(del.status).toBe(204);
    expect(del.headers['x-request-id']).toBeTruthy();
    expectTrendhooksError(await http().get(`/v1/webhooks/${w.id}`).set(auth), 404, 'NOT_FOUND');
  });

  it('answers 401 and 403 in its own envelope with X-Request-Id', async () => {
    const none = await http().get('/v1/webhooks');
    expectTrendhooksError(none, 401, 'UNAUTHORIZED');
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
    expectTrendhooksError(await http().post('/v1/webhooks').set({ Authorization: 'Bearer th_live_nope' }).send(valid()), 401, 'UNAUTHORIZED');
    expectTrendhooksError(await http().get('/v1/webhooks').set(await customer('free')), 403, 'PLAN_REQUIRED');
  });

  it("keeps its own validation under the host's global ValidationPipe (whitelist, forbidNonWhitelisted, transform)", async () => {
    const auth = await customer();
    const extra = await http().post('/v1/webhooks').set(auth).send(valid({ extra: 1 }));
    expectTrendhooksError(extra, 400, 'VALIDATION_ERROR');
    expect(extra.body.error.message).toContain('extra');
    const missing = await http().post('/v1/webhooks').set(auth).send(valid({ event: undefined }));
    expectTrendhooksError(missing, 400, 'VALIDATION_ERROR');
    expect(missing.body.error.message).toContain('event');
    expectTrendhooksError(await http().get('/v1/webhooks/not-a-ulid').set(auth), 400, 'VALIDATION_ERROR');
    expectTrendhooksError(await http().get('/v1/webhooks?limit=0').set(auth), 400, 'BAD_REQUEST');
    expectTrendhooksError(await http().get(`/v1/webhooks/${ULID}`).set(auth), 404, 'NOT_FOUND');
  });

  it('reads its own bodies: 400 INVALID_JSON, 415 and 413 in its envelope', async () => {
    const auth = await customer();
    expectTrendhooksError(await http().post('/v1/webhooks').set(auth).set('Content-Type', 'application/json').send('{"url":'), 400, 'INVALID_JSON');
    expectTrendhooksError(await http().post('/v1/webhooks').set(auth).set('Content-Type', 'text/plain').send('url=x'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectTrendhooksError(await http().post('/v1/webhooks').set(auth).send(valid({ pad: 'x'.repeat(70 * 1024) })), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('applies the SSRF policy from SsrfModule.forRootAsync (422 naming the address)', async () => {
    const auth = await customer();
    const internal = await http().post('/v1/webhooks').set(auth).send(valid({ url: 'https://10.0.0.1/' }));
    expectTrendhooksError(internal, 422, 'WEBHOOK_DESTINATION_BLOCKED');
    // Blocked only by the host's extra deny list.
    const denied = await http().post('/v1/webhooks').set(auth).send(valid({ url: 'https://denied.example.com/' }));
    expectTrendhooksError(denied, 422, 'WEBHOOK_DESTINATION_BLOCKED');
    expect(denied.body.error.message).toContain('8.8.4.4');
  });

  it('queues a test delivery without sending it (DeliveryModule.forRootAsync with worker: false)', async () => {
    const auth = await customer();
    const w = (await http().post('/v1/webhooks').set(auth).send(valid())).body.data;
    const sent = await http().post(`/v1/webhooks/${w.id}/test`).set(auth);
    expect(sent.status).toBe(202);
    await new Promise((r) => setTimeout(r, 300));
    const list = await http().get(`/v1/webhooks/${w.id}/deliveries`).set(auth);
    expect(list.body.data).toEqual([expect.objectContaining({ id: sent.body.data.delivery_id, state: 'pending', attempt_count: 0 })]);
  });

  it('serves the posts routes for any plan', async () => {
    const res = await http().get('/v1/subreddits/typescript/posts').set(await customer('free'));
    expect(res.status).toBe(200);
    expect(res.body.meta.page).toEqual({ limit: 25, next_cursor: null });
  });

  it("leaves the host's own routes to the host: no auth, no envelope, no request id, the host's error format", async () => {
    const ping = await http().get('/host/ping');
    expect(ping.status).toBe(200);
    expect(ping.body).toEqual({ pong: true });
    expect(ping.headers['x-request-id']).toBeUndefined();
    expect(ping.headers['x-ratelimit-limit']).toBeUndefined();

    expect((await http().get('/host/echo?n=21')).body).toEqual({ n: 21, doubled: 42 });
    const bad = await http().get('/host/echo?n=abc');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ ok: false, status: 400, reason: expect.arrayContaining([expect.stringContaining('n must be an integer')]) });

    const unknown = await http().get('/v1/nope');
    expect(unknown.body).toEqual({ ok: false, status: 404, reason: expect.any(String) });
  });

  it("documents trendhooks' routes in the host's own OpenAPI document", () => {
    const config = new DocumentBuilder().setTitle('host').build();
    config.components = { ...config.components, ...TRENDHOOKS_OPENAPI_COMPONENTS };
    const doc = SwaggerModule.createDocument(app, config);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/host/ping', '/v1/webhooks', '/v1/webhooks/{webhook_id}', '/v1/subreddits/{subreddit}/posts']));
    // Every reference resolves inside the host's document.
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/([^"]+)"/g)].map((m) => m[1]);
    for (const ref of new Set(refs)) {
      const target = ref.split('/').reduce((node: any, k) => node?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
      expect({ ref, found: target !== undefined }).toEqual({ ref, found: true });
    }
  });
});
