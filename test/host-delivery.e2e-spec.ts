import { DynamicModule, Injectable, INestApplication, Module } from '@nestjs/common';
import { ModulesContainer, NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import request from 'supertest';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import {
  AuthModule,
  CryptoModule,
  DeliveryEndpoints,
  DeliveryModule,
  EventsService,
  generateEncryptionKey,
  POSTGRES_MIGRATIONS,
  SQLITE_MIGRATIONS,
  SsrfModule,
  StaticDnsResolver,
  SubscriptionSource,
  TRENDHOOKS_ENTITIES,
  WebhooksModule,
  type DatabaseConfig,
  type RoutedEvent,
  type SubscribedEndpoint,
  TrendhooksModule,
} from '../src/index';
import { DeliveryQueue } from '../src/delivery/queue/delivery-queue';
import { AppError } from '../src/common/errors';
import { testDatabases, TestDatabase } from './support/databases';
import { makeCert, Receiver, sleep, TestCert } from './support/receiver';

/**
 * A host that keeps its own subscriptions (here: its users follow subreddits, whatever the event
 * kind) and uses trendhooks' delivery core only: DeliveryModule with its own SubscriptionSource,
 * no WebhooksModule, no webhook routes.
 */
@Injectable()
class HostFollows extends SubscriptionSource {
  /** subreddit → the delivery endpoints of the host users who follow it. */
  readonly bySubreddit = new Map<string, SubscribedEndpoint[]>();
  readonly asked: RoutedEvent[] = [];

  follow(subreddit: string, endpoint: SubscribedEndpoint): void {
    this.bySubreddit.set(subreddit, [...(this.bySubreddit.get(subreddit) ?? []), endpoint]);
  }

  async subscribers(event: RoutedEvent): Promise<SubscribedEndpoint[]> {
    this.asked.push(event);
    if (event.subreddit === 'forbidden') throw new AppError('VALIDATION_ERROR', 'the host refuses r/forbidden');
    return this.bySubreddit.get(event.subreddit) ?? [];
  }
}

@Module({ providers: [HostFollows], exports: [HostFollows] })
class HostFollowsModule {}

function typeOrmOptions(db: DatabaseConfig) {
  const common = { entities: [...TRENDHOOKS_ENTITIES], migrationsRun: true, migrationsTableName: 'host_migrations', synchronize: false, logging: false };
  return db.type === 'postgres'
    ? { type: 'postgres' as const, url: db.url, migrations: POSTGRES_MIGRATIONS, ...common }
    : { type: 'better-sqlite3' as const, database: db.path, migrations: SQLITE_MIGRATIONS, ...common };
}

@Module({})
class HostDeliveryOnlyModule {
  static forRoot(db: DatabaseConfig, cert: TestCert): DynamicModule {
    return {
      module: HostDeliveryOnlyModule,
      imports: [
        TypeOrmModule.forRoot(typeOrmOptions(db)),
        TrendhooksModule.forRoot(),
        AuthModule.forRoot({}),
        CryptoModule.forRoot({ keys: [generateEncryptionKey()] }),
        SsrfModule.forRoot({ resolver: new StaticDnsResolver({ 'receiver.test': ['127.0.0.1'] }), allowCidrs: '127.0.0.1/32' }),
        DeliveryModule.forRootAsync({
          imports: [HostFollowsModule],
          inject: [HostFollows],
          useFactory: (follows: HostFollows) => ({
            subscriptions: follows,
            ca: cert.cert,
            timeoutMs: 3000,
            leaseMs: 10_000,
            pollIntervalMs: 100,
            retryScheduleSeconds: [0.05, 0.05],
          }),
        }),
        HostFollowsModule,
      ],
    };
  }
}

describe.each(testDatabases())('delivery from the host’s own subscriptions, without WebhooksModule, on %s', (_name, makeDb) => {
  let db: TestDatabase;
  let cert: TestCert;
  let rx: Receiver;
  let app: INestApplication;

  beforeAll(async () => {
    cert = makeCert();
    rx = await Receiver.start(cert);
    db = makeDb();
    const database = await db.create();
    app = await NestFactory.create(HostDeliveryOnlyModule.forRoot(database, cert), { logger: false, abortOnError: false });
    await app.init();
  });
  afterAll(async () => {
    await app?.close();
    await rx?.close();
    await db?.drop();
  });
  beforeEach(() => {
    rx.received.length = 0;
    rx.behaviour = () => ({ status: 200 });
  });

  it('has no webhook module and no webhook routes', async () => {
    const modules = [...app.get(ModulesContainer).values()].map((m) => m.metatype);
    expect(modules).toContain(DeliveryModule);
    expect(modules).not.toContain(WebhooksModule);
    expect((await request(app.getHttpServer()).get(`/v1/webhooks`)).status).toBe(404);
    expect((await request(app.getHttpServer()).post(`/v1/webhooks/01ARZ3NDEKTSV4RRFFQ69G5FAV/test`)).status).toBe(404);
  });

  it('delivers a signed event to the endpoints the host names, retries a failure and logs every attempt', async () => {
    const endpoints = app.get(DeliveryEndpoints);
    const follows = app.get(HostFollows);
    const a = await endpoints.register({ customerId: 'host-user-a', url: rx.namedUrl('/a'), allowNonstandardPort: true });
    const b = await endpoints.register({ customerId: 'host-user-b', url: rx.namedUrl('/b'), allowNonstandardPort: true });
    expect(a.secret).toMatch(/^whsec_/);
    follows.follow('typescript', { id: a.id, customerId: 'host-user-a' });
    follows.follow('typescript', { id: b.id, customerId: 'host-user-b' });
    // /b fails once (503), then accepts.
    let failedB = false;
    rx.behaviour = (r) => (r.path === '/b' && !failedB ? ((failedB = true), { status: 503 }) : { status: 204 });

    const res = await app.get(EventsService).emit({ type: 'trends.surge', subreddit: 'r/TypeScript', data: { count: 42 } });
    expect(res).toMatchObject({ created: true, deliveries: 2 });
    expect(follows.asked.at(-1)).toMatchObject({ id: res.event_id, type: 'trends.surge', subreddit: 'typescript', data: { count: 42 } });
    await rx.waitForCount(3);

    const toA = rx.received.filter((r) => r.path === '/a');
    const toB = rx.received.filter((r) => r.path === '/b');
    expect([toA.length, toB.length]).toEqual([1, 2]);
    const payload = new StandardWebhook(a.secret).verify(toA[0].body, toA[0].headers as Record<string, string>) as { type: string; data: Record<string, unknown> };
    expect(payload).toMatchObject({ type: 'trends.surge', data: { event_id: res.event_id, webhook_id: a.id, subreddit: 'typescript', count: 42 } });
    for (const r of toB) new StandardWebhook(b.secret).verify(r.body, r.headers as Record<string, string>);
    // Signed with each endpoint's own secret: a's secret does not verify b's delivery.
    expect(() => new StandardWebhook(a.secret).verify(toB[0].body, toB[0].headers as Record<string, string>)).toThrow();
    expect(toB[0].headers['webhook-id']).toBe(toB[1].headers['webhook-id']);

    const queue = app.get(DeliveryQueue);
    const deliveryB = String(toB[0].headers['webhook-id']);
    const deadline = Date.now() + 10_000;
    while ((await queue.findForWebhook(b.id, deliveryB))?.state !== 'delivered' && Date.now() < deadline) await sleep(50);
    expect(await queue.findForWebhook(b.id, deliveryB)).toMatchObject({ state: 'delivered', eventId: res.event_id });
    const attempts = await queue.attemptsFor([deliveryB]);
    expect(attempts.map((x) => [x.attemptNo, x.outcome, x.statusCode])).toEqual([
      [1, 'transient', 503],
      [2, 'delivered', 204],
    ]);
  });

  it('sends nothing for an event nobody follows, and once only for a replayed event id', async () => {
    const endpoints = app.get(DeliveryEndpoints);
    const c = await endpoints.register({ customerId: 'host-user-c', url: rx.namedUrl('/c'), allowNonstandardPort: true });
    app.get(HostFollows).follow('rust', { id: c.id, customerId: 'host-user-c' });
    const events = app.get(EventsService);
    expect(await events.emit({ type: 'trends.velocity', subreddit: 'golang', data: {} })).toMatchObject({ deliveries: 0 });
    const first = await events.emit({ id: 'evt_host_replay_1', type: 'trends.velocity', subreddit: 'rust', data: { k: 1 } });
    const again = await events.emit({ id: 'evt_host_replay_1', type: 'trends.velocity', subreddit: 'rust', data: { k: 1 } });
    expect([first.deliveries, again]).toEqual([1, { event_id: 'evt_host_replay_1', created: false, deliveries: 0 }]);
    await rx.waitForCount(1);
    await sleep(300);
    expect(rx.received.map((r) => r.path)).toEqual(['/c']);
  });

  it('writes no delivery, and sends nothing, to an endpoint the host removed but its source still answers', async () => {
    const endpoints = app.get(DeliveryEndpoints);
    const d = await endpoints.register({ customerId: 'host-user-d', url: rx.namedUrl('/d'), allowNonstandardPort: true });
    app.get(HostFollows).follow('deno', { id: d.id, customerId: 'host-user-d' });
    expect(await endpoints.remove(d.id)).toBe(true);
    expect(await endpoints.remove(d.id)).toBe(false);
    const res = await app.get(EventsService).emit({ type: 'trends.rising', subreddit: 'deno', data: {} });
    expect(res).toMatchObject({ created: true, deliveries: 0 });
    await sleep(500);
    expect(rx.received).toEqual([]);
  });

  it('a 410 disables an endpoint (gone) and nothing more is sent there; the host sees it and resumes it; disable() pauses it', async () => {
    const endpoints = app.get(DeliveryEndpoints);
    const g = await endpoints.register({ customerId: 'host-user-g', url: rx.namedUrl('/g'), allowNonstandardPort: true });
    app.get(HostFollows).follow('zig', { id: g.id, customerId: 'host-user-g' });
    expect(await endpoints.state(g.id)).toEqual({ disabled: false, reason: null, disabledAt: null });
    rx.behaviour = () => ({ status: 410 });
    const events = app.get(EventsService);
    await events.emit({ type: 'trends.surge', subreddit: 'zig', data: { n: 1 } });
    await rx.waitForCount(1);
    const deadline = Date.now() + 10_000;
    while (!(await endpoints.state(g.id))?.disabled && Date.now() < deadline) await sleep(50);
    expect(await endpoints.state(g.id)).toMatchObject({ disabled: true, reason: 'gone', disabledAt: expect.any(Date) });

    rx.behaviour = () => ({ status: 204 });
    await events.emit({ type: 'trends.surge', subreddit: 'zig', data: { n: 2 } });
    await sleep(500);
    expect(rx.received).toHaveLength(1);

    expect(await endpoints.resume(g.id)).toBe(true);
    expect(await endpoints.resume(g.id)).toBe(false);
    expect(await endpoints.state(g.id)).toEqual({ disabled: false, reason: null, disabledAt: null });
    await events.emit({ type: 'trends.surge', subreddit: 'zig', data: { n: 3 } });
    await rx.waitForCount(2);
    expect(JSON.parse(rx.received[1].body).data.n).toBe(3);

    expect(await endpoints.disable(g.id)).toBe(true);
    expect(await endpoints.disable(g.id)).toBe(false);
    expect(await endpoints.state(g.id)).toMatchObject({ disabled: true, reason: 'manual' });
    expect(await endpoints.state('01ARZ3NDEKTSV4RRFFQ69G5FAV')).toBeNull();
  });

  it('refuses a destination the SSRF policy blocks, and passes on the error a host source throws', async () => {
    const endpoints = app.get(DeliveryEndpoints);
    await expect(endpoints.register({ customerId: 'host-user-e', url: 'https://10.0.0.1/' })).rejects.toMatchObject({ code: 'WEBHOOK_DESTINATION_BLOCKED' });
    await expect(endpoints.register({ customerId: '', url: rx.namedUrl() })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(app.get(EventsService).emit({ type: 'trends.surge', subreddit: 'forbidden', data: {} })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });
});
