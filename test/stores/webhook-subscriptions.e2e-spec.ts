import { CustomerEntity } from '../../src/auth/customer.entity';
import { newId, newUlid } from '../../src/common/ids';
import { WebhookTableSubscriptions } from '../../src/delivery/subscription-source';
import { newWebhookRow, WebhookEntity } from '../../src/delivery/webhook.entity';
import { testDatabases } from '../support/databases';
import { storeFixture, uniqueName } from './store-fixture';

const T0 = Date.UTC(2025, 0, 1);

/**
 * What the built-in subscriptions tell the modules that follow them without reading the
 * `webhooks` table (the Reddit poller's tracked set, coverage's "tracked?"), on each database.
 */
describe.each(testDatabases())('WebhookTableSubscriptions on %s', (_name, makeDb) => {
  const f = storeFixture(makeDb, { sqlite: WebhookTableSubscriptions, postgres: WebhookTableSubscriptions });

  async function webhook(subreddit: string): Promise<void> {
    const customerId = newId('cus');
    await f.ds.getRepository(CustomerEntity).insert({ id: customerId, name: uniqueName('cust', 200), plan: 'business', privateAllow: null, createdAt: new Date(T0) });
    const event = subreddit === '' ? ('' as WebhookEntity['event']) : 'trends.rising';
    await f.ds.getRepository(WebhookEntity).insert(newWebhookRow({ id: newUlid(), customerId, url: 'https://example.com/h', event, subreddit, allowNonstandardPort: false, secret: 's', createdAt: new Date(T0) }));
  }

  it('lists the subreddits webhooks subscribe to, each once, and no host endpoint (which subscribes to none)', async () => {
    const [x, y] = [uniqueName('sub'), uniqueName('sub')];
    for (const subreddit of [x, y, x, '']) await webhook(subreddit);
    const subs = await f.store.subredditsWithWebhooks();
    expect(subs.filter((s) => s === x || s === y).sort()).toEqual([x, y].sort());
    expect(subs).not.toContain('');
  });

  it('says whether any webhook subscribes to a subreddit', async () => {
    const [followed, unfollowed] = [uniqueName('has'), uniqueName('hasnt')];
    await webhook(followed);
    await webhook('');
    expect(await f.store.hasWebhook(followed)).toBe(true);
    expect(await f.store.hasWebhook(unfollowed)).toBe(false);
    expect(await f.store.hasWebhook('')).toBe(false);
  });
});
