import { CustomerEntity } from '../../src/auth/customer.entity';
import { newId, newUlid } from '../../src/common/ids';
import { newEndpointRow } from '../../src/delivery/endpoint.entity';
import { EndpointStore } from '../../src/delivery/endpoint.store';
import type { WebhookStore } from '../../src/webhooks/webhook.store';
import { PostgresWebhookStore } from '../../src/webhooks/webhook.store.postgres';
import { SqliteWebhookStore } from '../../src/webhooks/webhook.store.sqlite';
import { testDatabases } from '../support/databases';
import { storeFixture, uniqueName } from './store-fixture';

const T0 = Date.UTC(2025, 0, 1);

/**
 * What the webhook API's subscriptions tell the delivery core (the built-in source's fan-out) and
 * the modules that follow them without reading the table (the Reddit poller's tracked set,
 * coverage's "tracked?"), on each database. A host's endpoint (an endpoint with no subscription)
 * is never among them.
 */
describe.each(testDatabases())('webhook subscriptions on %s', (_name, makeDb) => {
  const f = storeFixture<WebhookStore>(makeDb, { sqlite: SqliteWebhookStore, postgres: PostgresWebhookStore }, (Store, ds) => new Store(ds, new EndpointStore(ds)));
  let ms = T0;

  async function customer(): Promise<string> {
    const customerId = newId('cus');
    await f.ds.getRepository(CustomerEntity).insert({ id: customerId, name: uniqueName('cust', 200), plan: 'business', privateAllow: null, createdAt: new Date(T0) });
    return customerId;
  }

  async function webhook(subreddit: string, event: 'trends.rising' | 'trends.surge' = 'trends.rising', customerId?: string): Promise<string> {
    const c = customerId ?? (await customer());
    const id = newUlid(ms++);
    const endpoint = newEndpointRow({ id, customerId: c, url: 'https://example.com/h', allowNonstandardPort: false, secret: 's', createdAt: new Date(T0) });
    expect(await f.store.insertWithinQuota(endpoint, { event, subreddit }, 100)).toBe(true);
    return id;
  }

  /** A host's endpoint: an endpoint the delivery core stores with no subscription. */
  async function hostEndpoint(): Promise<string> {
    const id = newUlid(ms++);
    await new EndpointStore(f.ds).insert(newEndpointRow({ id, customerId: 'host-tenant', url: 'https://example.com/h', allowNonstandardPort: false, secret: 's', createdAt: new Date(T0) }));
    return id;
  }

  it('answers the subscribers of a kind and subreddit, oldest first, with their owners, and no one else', async () => {
    const sub = uniqueName('fan');
    const c = await customer();
    const first = await webhook(sub, 'trends.rising', c);
    await webhook(sub, 'trends.surge');
    await webhook(uniqueName('other'));
    await hostEndpoint();
    const second = await webhook(sub, 'trends.rising');
    const found = await f.store.subscribers({ id: 'evt_x', type: 'trends.rising', subreddit: sub, data: {}, createdAt: new Date(T0) });
    expect(found.map((s) => s.id)).toEqual([first, second]);
    expect(found[0].customerId).toBe(c);
  });

  it('lists the subreddits webhooks subscribe to, each once, and no host endpoint (which subscribes to none)', async () => {
    const [x, y] = [uniqueName('sub'), uniqueName('sub')];
    for (const subreddit of [x, y, x]) await webhook(subreddit);
    await hostEndpoint();
    const subs = await f.store.subredditsWithWebhooks();
    expect(subs.filter((s) => s === x || s === y).sort()).toEqual([x, y].sort());
    expect(subs).not.toContain('');
  });

  it('says whether any webhook subscribes to a subreddit', async () => {
    const [followed, unfollowed] = [uniqueName('has'), uniqueName('hasnt')];
    await webhook(followed);
    await hostEndpoint();
    expect(await f.store.hasWebhook(followed)).toBe(true);
    expect(await f.store.hasWebhook(unfollowed)).toBe(false);
    expect(await f.store.hasWebhook('')).toBe(false);
  });

  it('removes the endpoint again when the quota refuses the subscription, and deletes both halves of a webhook', async () => {
    const c = await customer();
    const kept = await webhook(uniqueName('q'), 'trends.rising', c);
    const refused = newEndpointRow({ id: newUlid(ms++), customerId: c, url: 'https://example.com/h', allowNonstandardPort: false, secret: 's', createdAt: new Date(T0) });
    expect(await f.store.insertWithinQuota(refused, { event: 'trends.rising', subreddit: 'node' }, 1)).toBe(false);
    const endpoints = new EndpointStore(f.ds);
    expect(await endpoints.find(refused.id)).toBeNull();
    expect(await f.store.deleteForCustomer(c, kept)).toBe(true);
    expect(await endpoints.find(kept)).toBeNull();
  });
});
