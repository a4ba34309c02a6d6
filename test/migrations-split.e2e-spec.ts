import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations } from '../src/database/data-source';
import type { DatabaseConfig } from '../src/database/dialect';
import { POSTGRES_FEATURE_MIGRATIONS, POSTGRES_MIGRATIONS } from '../src/database/migrations/postgres';
import { SQLITE_FEATURE_MIGRATIONS, SQLITE_MIGRATIONS } from '../src/database/migrations/sqlite';
import { EventsService } from '../src/delivery/events.service';
import { EndpointStore } from '../src/delivery/endpoint.store';
import { TRENDHOOKS_ENTITIES } from '../src/entities';
import { WebhookStore } from '../src/webhooks/webhook.store';
import { existingDatabase, testDatabases, TestDatabase } from './support/databases';
import { startTestApp, TestApp } from './support/app';

const T0 = Date.UTC(2026, 10, 1);
const WEBHOOK = '01KA0000000000000000000001';
const PAUSED = '01KA0000000000000000000002';
const HOST_ENDPOINT = '01KA0000000000000000000003';

/**
 * The endpoint/subscription split on a database that already holds webhooks: the migration moves
 * each webhook's event kind and subreddit into `webhook_subscriptions` in place, keeps every
 * endpoint column (ids, secrets, state, last_*), gives a host's endpoint (kind '') no subscription,
 * and the service then reads and routes them as before. Both dialects, both migration series.
 */
describe.each(testDatabases())('the webhooks table split in place on %s', (name, makeDb) => {
  const series = {
    standalone: name === 'postgres' ? POSTGRES_MIGRATIONS : SQLITE_MIGRATIONS,
    host: name === 'postgres' ? POSTGRES_FEATURE_MIGRATIONS.core : SQLITE_FEATURE_MIGRATIONS.core,
  };

  /** Where the split is in a series (the migrations after it, if any, run with it). */
  const splitAt = (migrations: typeof series.standalone): number => {
    const i = migrations.findIndex((m) => /WebhookSubscriptions\d+$/.test(m.name));
    expect(i).toBeGreaterThan(0);
    return i;
  };

  /** A database migrated up to the migration before the split, holding three old-shape rows. */
  async function before(db: TestDatabase, migrations: typeof series.standalone, migrationsTableName?: string): Promise<DatabaseConfig> {
    const cfg = await db.create();
    const ds = new DataSource({ ...dataSourceOptions(cfg, []), migrations: migrations.slice(0, splitAt(migrations)), ...(migrationsTableName ? { migrationsTableName } : {}) });
    await ds.initialize();
    try {
      await runMigrations(ds);
      const p = (n: number) => (name === 'postgres' ? `$${n}` : '?');
      const insert = `INSERT INTO webhooks (id, customer_id, url, event, subreddit, allow_nonstandard_port, secret, previous_secret, created_at, last_delivery_at, last_status, last_response_code, disabled_at, disabled_reason, failure_periods)
        VALUES (${[...Array(15).keys()].map((i) => p(i + 1)).join(', ')})`;
      const bool = (b: boolean) => (name === 'postgres' ? b : b ? 1 : 0);
      await ds.query(insert, [WEBHOOK, 'cus_old', 'https://hooks.example.com/a', 'trends.surge', 'rust', bool(false), 'whsec_a', null, T0, T0 + 5, 'delivered', 200, null, null, 0]);
      await ds.query(insert, [PAUSED, 'cus_old', 'https://hooks.example.com:8443/b', 'trends.rising', 'golang', bool(true), 'whsec_b', 'whsec_b0', T0 + 1, null, null, null, T0 + 9, 'manual', 2]);
      await ds.query(insert, [HOST_ENDPOINT, 'host-user', 'https://hooks.example.com/c', '', '', bool(false), 'whsec_c', null, T0 + 2, null, null, null, null, null, 0]);
    } finally {
      await ds.destroy();
    }
    return cfg;
  }

  async function after(cfg: DatabaseConfig, migrations: typeof series.standalone, migrationsTableName?: string): Promise<DataSource> {
    const ds = new DataSource({ ...dataSourceOptions(cfg, TRENDHOOKS_ENTITIES), migrations, ...(migrationsTableName ? { migrationsTableName } : {}) });
    await ds.initialize();
    expect(await runMigrations(ds)).toEqual(migrations.slice(splitAt(migrations)).map((m) => m.name));
    return ds;
  }

  async function expectSplit(ds: DataSource): Promise<void> {
    const subs = (await ds.query('SELECT webhook_id, customer_id, event, subreddit, created_at FROM webhook_subscriptions ORDER BY webhook_id')) as Record<string, unknown>[];
    expect(subs.map((r) => ({ ...r, created_at: Number(r.created_at) }))).toEqual([
      { webhook_id: WEBHOOK, customer_id: 'cus_old', event: 'trends.surge', subreddit: 'rust', created_at: T0 },
      { webhook_id: PAUSED, customer_id: 'cus_old', event: 'trends.rising', subreddit: 'golang', created_at: T0 + 1 },
    ]);
    const endpoints = new EndpointStore(ds);
    expect(await endpoints.find(PAUSED)).toMatchObject({
      customerId: 'cus_old',
      url: 'https://hooks.example.com:8443/b',
      allowNonstandardPort: true,
      secret: 'whsec_b',
      previousSecret: 'whsec_b0',
      disabledAt: new Date(T0 + 9),
      disabledReason: 'manual',
      failurePeriods: 2,
    });
    expect(await endpoints.find(HOST_ENDPOINT)).toMatchObject({ customerId: 'host-user', url: 'https://hooks.example.com/c', secret: 'whsec_c' });
    const columns = (await ds.query(
      name === 'postgres' ? "SELECT column_name AS name FROM information_schema.columns WHERE table_name = 'webhooks'" : 'SELECT name FROM pragma_table_info(\'webhooks\')',
    )) as { name: string }[];
    expect(columns.map((c) => c.name)).not.toEqual(expect.arrayContaining(['event']));
    expect(columns.map((c) => c.name)).not.toEqual(expect.arrayContaining(['subreddit']));
  }

  it('the standalone series: moves the subscriptions, keeps the endpoints, and the service reads and routes them', async () => {
    const base = makeDb();
    const cfg = await before(base, series.standalone);
    const ds = await after(cfg, series.standalone);
    let t: TestApp | undefined;
    try {
      await expectSplit(ds);
      // The service on the migrated database (API only: nothing sends to example.com).
      t = await startTestApp(existingDatabase(cfg), { role: 'api' });
      const store = t.app.get(WebhookStore);
      expect(await store.findForCustomer('cus_old', WEBHOOK)).toMatchObject({ id: WEBHOOK, event: 'trends.surge', subreddit: 'rust', url: 'https://hooks.example.com/a', lastStatus: 'delivered', lastResponseCode: 200 });
      expect((await store.page('cus_old', { limit: 10 })).map((w) => [w.id, w.event, w.subreddit, w.disabledReason])).toEqual([
        [PAUSED, 'trends.rising', 'golang', 'manual'],
        [WEBHOOK, 'trends.surge', 'rust', null],
      ]);
      expect(await store.findForCustomer('host-user', HOST_ENDPOINT)).toBeNull();
      const events = t.app.get(EventsService);
      expect(await events.emit({ type: 'trends.surge', subreddit: 'rust', data: {} })).toMatchObject({ deliveries: 1 });
      // The paused webhook's subscription moved too, and it still gets nothing while paused.
      expect(await events.emit({ type: 'trends.rising', subreddit: 'golang', data: {} })).toMatchObject({ deliveries: 0 });
      expect(await store.subredditsWithWebhooks()).toEqual(expect.arrayContaining(['rust', 'golang']));
    } finally {
      await t?.close();
      await ds.destroy();
      await base.drop();
    }
  });

  it("a host's series (the core feature, its own migrations table): the same move", async () => {
    const base = makeDb();
    const cfg = await before(base, series.host, 'host_migrations');
    const ds = await after(cfg, series.host, 'host_migrations');
    try {
      await expectSplit(ds);
    } finally {
      await ds.destroy();
      await base.drop();
    }
  });

  it('goes back down: the subscriptions return to their webhooks, a host endpoint to no kind', async () => {
    const base = makeDb();
    const cfg = await before(base, series.standalone);
    const ds = await after(cfg, series.standalone);
    try {
      // Down through the split, and first through whatever came after it.
      for (let i = splitAt(series.standalone); i < series.standalone.length; i++) await ds.undoLastMigration();
      const rows = (await ds.query('SELECT id, event, subreddit FROM webhooks ORDER BY id')) as { id: string; event: string; subreddit: string }[];
      expect(rows).toEqual([
        { id: WEBHOOK, event: 'trends.surge', subreddit: 'rust' },
        { id: PAUSED, event: 'trends.rising', subreddit: 'golang' },
        { id: HOST_ENDPOINT, event: '', subreddit: '' },
      ]);
    } finally {
      await ds.destroy();
      await base.drop();
    }
  });
});
