import { CustomerEntity } from '../../src/auth/customer.entity';
import { newId, newUlid } from '../../src/common/ids';
import { sqliteHandle } from '../../src/database/data-source';
import { SqliteDeliveryQueue } from '../../src/delivery/queue/sqlite/sqlite-delivery-queue';
import { SqliteWebhookDeliveryStatus } from '../../src/delivery/status/webhook-delivery-status.sqlite';
import { SqliteTrendSourceLeaseStore } from '../../src/trends/reddit/trend-source-lease.store.sqlite';
import { EndpointEntity, newEndpointRow } from '../../src/delivery/endpoint.entity';
import { testDatabases } from '../support/databases';
import { databaseFixture, uniqueName } from './store-fixture';

/**
 * SQLite only: the status writes, the queue and the trend sources' leases prepare their
 * statements once per better-sqlite3 handle, not on every call; and a data source initialised again (a new handle, the old one
 * closed) gets statements of its own rather than the closed handle's.
 */
describe.each(testDatabases().filter(([name]) => name === 'sqlite'))('SQLite prepared statements (%s)', (_name, makeDb) => {
  const db = databaseFixture(makeDb);
  const NOW = new Date(Date.UTC(2025, 0, 1));
  const DAYS_5 = 5 * 86_400_000;

  async function failingWebhook(): Promise<string> {
    const customerId = newId('cus');
    await db.ds.getRepository(CustomerEntity).insert({ id: customerId, name: uniqueName('cust', 200), plan: 'business', privateAllow: null, createdAt: NOW });
    const w = newEndpointRow({ id: newUlid(), customerId, url: 'https://example.com/hook', allowNonstandardPort: false, secret: 'enc:secret', createdAt: new Date(NOW.getTime() - 60_000) });
    await db.ds.getRepository(EndpointEntity).insert({ ...w, failingSince: new Date(NOW.getTime() - 60_000) });
    return w.id;
  }

  /** Counts the statements prepared on the data source's current handle while `run` runs. */
  async function prepared(run: () => Promise<unknown>): Promise<number> {
    const spy = jest.spyOn(sqliteHandle(db.ds), 'prepare');
    try {
      await run();
      return spy.mock.calls.length;
    } finally {
      spy.mockRestore();
    }
  }

  it('prepares the failure count and the latest outcome once per connection, and again on a new one', async () => {
    const status = new SqliteWebhookDeliveryStatus(db.ds);
    const id = await failingWebhook();
    const fail = (ms: number) => status.recordFailures([{ webhookId: id, at: new Date(NOW.getTime() + ms), gone: false }], DAYS_5, NOW);
    const latest = (ms: number) => status.recordLatest([{ webhookId: id, at: new Date(NOW.getTime() + ms), status: 'retrying', responseCode: 503, errorClass: 'http_503' }]);

    expect(await prepared(() => fail(0))).toBeGreaterThan(0);
    expect(await prepared(async () => {
      for (let i = 1; i <= 5; i++) await fail(i * 3_600_000);
      await latest(6 * 3_600_000);
    })).toBe(0);
    expect(await db.ds.getRepository(EndpointEntity).findOneByOrFail({ id })).toMatchObject({ failurePeriods: 1, lastDeliveryAt: new Date(NOW.getTime() + 6 * 3_600_000), lastResponseCode: 503 });

    // The data source closed and opened again: a new handle, the statements prepared on it.
    await db.ds.destroy();
    await db.ds.initialize();
    expect(await prepared(async () => {
      await fail(7 * 3_600_000);
      await latest(8 * 3_600_000);
    })).toBeGreaterThan(0);
    expect(await db.ds.getRepository(EndpointEntity).findOneByOrFail({ id })).toMatchObject({ lastDeliveryAt: new Date(NOW.getTime() + 8 * 3_600_000), lastStatus: 'retrying' });
  });

  it("prepares the queue's statements again on a new connection (it kept the closed handle's)", async () => {
    const queue = new SqliteDeliveryQueue(db.ds, new SqliteWebhookDeliveryStatus(db.ds));
    const id = await failingWebhook();
    expect(await queue.webhookExists(id)).toBe(true);
    await db.ds.destroy();
    await db.ds.initialize();
    expect(await prepared(async () => expect(await queue.webhookExists(id)).toBe(true))).toBeGreaterThan(0);
    expect(await prepared(async () => expect(await queue.claimDue('worker_1', NOW, new Date(NOW.getTime() + 3000), 10)).toEqual([]))).toBe(0);
  });

  it("prepares the trend sources' lease statements again on a new connection (they kept the closed handle's)", async () => {
    const leases = new SqliteTrendSourceLeaseStore(db.ds);
    const subreddit = uniqueName('sub', 21);
    const t0 = NOW.getTime();
    expect(await leases.claim(subreddit, 'poller_1', t0, t0 + 30_000, t0)).toMatchObject({ claimed: true });
    await db.ds.destroy();
    await db.ds.initialize();
    expect(await prepared(async () => expect(await leases.claim(subreddit, 'poller_2', t0 + 1000, t0 + 31_000, t0)).toMatchObject({ claimed: false }))).toBeGreaterThan(0);
  });
});
