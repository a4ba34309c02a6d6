import { CustomerEntity } from '../../src/auth/customer.entity';
import { newId, newUlid } from '../../src/common/ids';
import { EndpointEntity } from '../../src/delivery/endpoint.entity';
import { EndpointStore } from '../../src/delivery/endpoint.store';
import type { Webhook, WebhookStore } from '../../src/webhooks/webhook.store';
import { StoreFixture, uniqueName } from './store-fixture';

const AT = new Date(Date.UTC(2025, 0, 1));

/** What every WebhookStore implementation must do, whatever its database. */
export function webhookStoreConformance(f: StoreFixture<WebhookStore>): void {
  async function customer(): Promise<string> {
    const id = newId('cus');
    await f.ds.getRepository(CustomerEntity).insert({ id, name: uniqueName('cust', 200), plan: 'business', privateAllow: null, createdAt: AT });
    return id;
  }

  let ms = AT.getTime();
  function webhook(customerId: string, over: Partial<Webhook> = {}): Webhook {
    // ULIDs of increasing time: the store's id order is creation order.
    return {
      id: newUlid(ms++), customerId, url: 'https://example.com/hook', event: 'trends.rising', subreddit: 'node', allowNonstandardPort: false,
      secret: 'enc:secret', previousSecret: null, previousSecretExpiresAt: null, createdAt: AT, lastDeliveryAt: null, lastStatus: null, lastResponseCode: null,
      disabledAt: null, disabledReason: null, failingSince: null, failurePeriods: 0, lastFailurePeriod: null, ...over,
    };
  }

  /** Stores a webhook as the API does: its endpoint and its subscription. */
  function insert({ event, subreddit, ...endpoint }: Webhook, max: number): Promise<boolean> {
    return f.store.insertWithinQuota(endpoint, { event, subreddit }, max);
  }

  const endpoints = () => new EndpointStore(f.ds);

  it('inserts within the quota and refuses past it; the row reads back as written', async () => {
    const c = await customer();
    const a = webhook(c, { allowNonstandardPort: true, subreddit: 'typescript', event: 'trends.surge' });
    expect(await insert(a, 2)).toBe(true);
    expect(await insert(webhook(c), 2)).toBe(true);
    expect(await insert(webhook(c), 2)).toBe(false);
    expect(await f.store.countForCustomer(c)).toBe(2);
    expect(await f.store.findForCustomer(c, a.id)).toEqual(a);
  });

  it("counts every customer's webhooks for the operator", async () => {
    const before = await f.store.countAll();
    const [a, b] = [await customer(), await customer()];
    for (const w of [webhook(a), webhook(a), webhook(b)]) await insert(w, 10);
    expect(await f.store.countAll()).toBe(before + 3);
  });

  it('never lets concurrent creates of one customer pass its quota', async () => {
    const c = await customer();
    const results = await Promise.all(Array.from({ length: 8 }, () => insert(webhook(c), 3)));
    expect(results.filter(Boolean)).toHaveLength(3);
    expect(await f.store.countForCustomer(c)).toBe(3);
  });

  it('never lets concurrent creates of a tenant with no customers row (a host principal) pass its quota', async () => {
    const tenant = uniqueName('host-tenant', 30);
    for (let round = 0; round < 3; round++) {
      const t = `${tenant}-${round}`;
      const results = await Promise.all(Array.from({ length: 8 }, () => insert(webhook(t), 2)));
      expect(results.filter(Boolean)).toHaveLength(2);
      expect(await f.store.countForCustomer(t)).toBe(2);
    }
  });

  it("counts, finds, updates and deletes only the caller's own webhooks", async () => {
    const [mine, theirs] = [await customer(), await customer()];
    const w = webhook(mine);
    await insert(w, 10);
    expect(await f.store.countForCustomer(theirs)).toBe(0);
    expect(await f.store.findForCustomer(theirs, w.id)).toBeNull();
    await endpoints().updateSecrets(theirs, { id: w.id, secret: 'stolen', previousSecret: null, previousSecretExpiresAt: null });
    expect(await f.store.deleteForCustomer(theirs, w.id)).toBe(false);
    expect(await f.store.findForCustomer(mine, w.id)).toMatchObject({ secret: 'enc:secret' });
    expect(await f.store.page(theirs, { limit: 10 })).toEqual([]);

    const expires = new Date(AT.getTime() + 86_400_000);
    await endpoints().updateSecrets(mine, { id: w.id, secret: 'enc:new', previousSecret: 'enc:secret', previousSecretExpiresAt: expires });
    expect(await f.store.findForCustomer(mine, w.id)).toMatchObject({ secret: 'enc:new', previousSecret: 'enc:secret', previousSecretExpiresAt: expires });
    expect(await f.store.deleteForCustomer(mine, w.id)).toBe(true);
    expect(await f.store.deleteForCustomer(mine, w.id)).toBe(false);
    expect(await f.store.findForCustomer(mine, w.id)).toBeNull();
  });

  it("answers a customer's distinct subscriptions, each since its oldest webhook, and no other customer's", async () => {
    const [mine, theirs] = [await customer(), await customer()];
    const later = new Date(AT.getTime() + 60_000);
    for (const w of [
      webhook(mine, { event: 'trends.surge', subreddit: 'rust', createdAt: later }),
      webhook(mine, { event: 'trends.surge', subreddit: 'rust', createdAt: AT }),
      webhook(mine, { event: 'trends.rising', subreddit: 'rust', createdAt: later }),
      webhook(theirs, { event: 'trends.velocity', subreddit: 'go', createdAt: AT }),
    ]) {
      expect(await insert(w, 10)).toBe(true);
    }
    const subs = (await f.store.subscriptionsOf(mine)).sort((a, b) => (a.event < b.event ? -1 : 1));
    expect(subs).toEqual([
      { event: 'trends.rising', subreddit: 'rust', since: later },
      { event: 'trends.surge', subreddit: 'rust', since: AT },
    ]);
    expect(await f.store.subscriptionsOf(await customer())).toEqual([]);
  });

  it('pages newest first by id, limit + 1 rows, after and before an id', async () => {
    const c = await customer();
    const rows = Array.from({ length: 6 }, () => webhook(c));
    for (const r of rows) await insert(r, 100);
    const ids = (ws: { id: string }[]) => ws.map((w) => w.id);
    const newest = rows.map((r) => r.id).reverse();
    expect(ids(await f.store.page(c, { limit: 2 }))).toEqual(newest.slice(0, 3));
    expect(ids(await f.store.page(c, { limit: 2, after: [newest[1]] }))).toEqual(newest.slice(2, 5));
    // `before` reads upwards: the nearest newer rows first.
    expect(ids(await f.store.page(c, { limit: 2, before: [newest[4]] }))).toEqual([newest[3], newest[2], newest[1]]);
    expect(await f.store.page(c, { limit: 2, after: [newest[5]] })).toEqual([]);
  });

  it('pages again after its data source is closed and opened again (a reconnect), with rows written meanwhile', async () => {
    const c = await customer();
    const first = webhook(c);
    await insert(first, 10);
    expect((await f.store.page(c, { limit: 5 })).map((w) => w.id)).toEqual([first.id]);
    await f.ds.destroy();
    await f.ds.initialize();
    const second = webhook(c);
    await insert(second, 10);
    expect((await f.store.page(c, { limit: 5 })).map((w) => w.id)).toEqual([second.id, first.id]);
  });

  it('reads a page row back as written, every field its resource shows, and never the secrets', async () => {
    const c = await customer();
    const plain = webhook(c, { createdAt: new Date(AT.getTime() + 1) });
    const full = webhook(c, { allowNonstandardPort: true, event: 'trends.surge', subreddit: 'typescript', url: 'https://example.com:8443/h?q=1', createdAt: new Date(AT.getTime() + 2) });
    for (const r of [plain, full]) await insert(r, 10);
    const last = { lastDeliveryAt: new Date(AT.getTime() + 3_000_000_123), lastStatus: 'retrying' as const, lastResponseCode: 503 };
    await f.ds.getRepository(EndpointEntity).update({ id: full.id }, last);
    const shown = ({ secret: _s, previousSecret: _p, previousSecretExpiresAt: _e, failingSince: _f, failurePeriods: _n, lastFailurePeriod: _l, ...rest }: Webhook) => rest;
    expect(await f.store.page(c, { limit: 5 })).toEqual([shown({ ...full, ...last }), shown(plain)]);
  });

  it("walks every webhook's endpoint by id for re-encryption and swaps secrets only while they are unchanged", async () => {
    const c = await customer();
    const a = webhook(c);
    const b = webhook(c);
    await insert(a, 10);
    await insert(b, 10);
    await endpoints().updateSecrets(c, { id: b.id, secret: 'enc:secret', previousSecret: 'enc:old', previousSecretExpiresAt: AT });
    const walked = await endpoints().secretsPage('', 100_000);
    const ours = walked.filter((w) => w.id === a.id || w.id === b.id).map((w) => ({ ...w }));
    expect(ours).toEqual([
      { id: a.id, secret: 'enc:secret', previousSecret: null },
      { id: b.id, secret: 'enc:secret', previousSecret: 'enc:old' },
    ]);
    expect(walked.map((w) => w.id)).toEqual([...walked.map((w) => w.id)].sort());
    expect((await endpoints().secretsPage(a.id, 1)).map((w) => ({ ...w }))).toEqual([{ id: b.id, secret: 'enc:secret', previousSecret: 'enc:old' }]);

    expect(await endpoints().replaceSecrets(a.id, { secret: 'enc:secret', previousSecret: null }, { secret: 'enc:v2', previousSecret: null })).toBe(true);
    expect(await endpoints().replaceSecrets(a.id, { secret: 'enc:secret', previousSecret: null }, { secret: 'enc:v3', previousSecret: null })).toBe(false);
    expect(await endpoints().replaceSecrets(b.id, { secret: 'enc:secret', previousSecret: null }, { secret: 'enc:v2', previousSecret: null })).toBe(false);
    expect(await endpoints().replaceSecrets(b.id, { secret: 'enc:secret', previousSecret: 'enc:old' }, { secret: 'enc:v2', previousSecret: 'enc:old2' })).toBe(true);
    expect(await f.store.findForCustomer(c, a.id)).toMatchObject({ secret: 'enc:v2', previousSecret: null });
    expect(await f.store.findForCustomer(c, b.id)).toMatchObject({ secret: 'enc:v2', previousSecret: 'enc:old2' });
  });

  it('patches only the customer\'s webhook: url, port flag, pause (keeping an earlier reason) and resume (restarting the failure clock)', async () => {
    const [c, other] = [await customer(), await customer()];
    const w = webhook(c, { failingSince: AT, failurePeriods: 2, lastFailurePeriod: 1 });
    await insert(w, 10);
    expect(await f.store.updateForCustomer(other, w.id, { disabled: { at: AT, reason: 'manual' } })).toBeNull();
    const moved = await f.store.updateForCustomer(c, w.id, { url: 'https://example.com/other', allowNonstandardPort: true });
    expect(moved).toMatchObject({ url: 'https://example.com/other', allowNonstandardPort: true, disabledAt: null });
    const later = new Date(AT.getTime() + 60_000);
    expect(await f.store.updateForCustomer(c, w.id, { disabled: { at: later, reason: 'manual' } })).toMatchObject({ disabledAt: later, disabledReason: 'manual' });
    // Paused again: the first pause's time and reason stay.
    expect(await f.store.updateForCustomer(c, w.id, { disabled: { at: new Date(later.getTime() + 1), reason: 'manual' } })).toMatchObject({ disabledAt: later });
    const listed = await f.store.page(c, { limit: 10 });
    expect(listed[0]).toMatchObject({ id: w.id, disabledAt: later, disabledReason: 'manual' });
    const resumed = await f.store.updateForCustomer(c, w.id, { disabled: null });
    expect(resumed).toMatchObject({ disabledAt: null, disabledReason: null, failingSince: null, failurePeriods: 0, lastFailurePeriod: null });
    expect(await f.store.findForCustomer(c, w.id)).toEqual(resumed);
  });
}
