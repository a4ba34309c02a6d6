import type { Plan } from './plans';
import type { ApiKeyEntity } from './api-key.entity';
import { displayPrefix, hashApiKey } from './api-key.format';
import { ApiKeyService } from './api-key.service';
import { ApiKeyStore, CustomerRef, KeyOwner } from './api-key.store';
import type { CustomerEntity } from './customer.entity';
import { PrivateDestinationsService } from './private-destinations.service';

const NOW = new Date(Date.UTC(2025, 0, 1));

/** In-memory ApiKeyStore: the contract the conformance suite checks on the real databases. */
class FakeApiKeyStore extends ApiKeyStore {
  customers: CustomerEntity[] = [];
  keys: ApiKeyEntity[] = [];
  webhookOwners = new Map<string, string>();

  async createKey(name: string, plan: Plan, key: Omit<ApiKeyEntity, 'customerId'>): Promise<{ customer: CustomerRef; created: boolean }> {
    let customer = this.customers.find((c) => c.name === name);
    const created = !customer;
    if (!customer) this.customers.push((customer = { id: `cus_${this.customers.length}`, name, plan, privateAllow: null, createdAt: key.createdAt }));
    customer.plan = plan;
    this.keys.push({ ...key, customerId: customer.id });
    return { customer: { id: customer.id, name, plan }, created };
  }
  async findByHash(keyHash: string): Promise<KeyOwner | null> {
    const k = this.keys.find((x) => x.keyHash === keyHash);
    const c = k && this.customers.find((x) => x.id === k.customerId);
    return k && c ? { keyId: k.id, customerId: c.id, plan: c.plan, revoked: k.revokedAt !== null } : null;
  }
  async findActive(match: { prefix: string } | { keyHash: string }) {
    return this.keys.filter((k) => k.revokedAt === null && ('prefix' in match ? k.prefix === match.prefix : k.keyHash === match.keyHash));
  }
  async revoke(keyId: string, at: Date) {
    for (const k of this.keys) if (k.id === keyId) k.revokedAt = at;
  }
  async findCustomerByName(name: string) {
    return this.customers.find((c) => c.name === name) ?? null;
  }
  async findCustomerById(id: string) {
    return this.customers.find((c) => c.id === id) ?? null;
  }
  async setPrivateAllow(customerId: string, privateAllow: string | null) {
    for (const c of this.customers) if (c.id === customerId) c.privateAllow = privateAllow;
  }
  async privateAllowOfWebhook(webhookId: string) {
    const owner = this.webhookOwners.get(webhookId);
    return owner === undefined ? null : this.privateAllowOfCustomer(owner);
  }
  async privateAllowOfCustomer(customerId: string) {
    return this.customers.find((c) => c.id === customerId)?.privateAllow ?? null;
  }
}

describe('ApiKeyService', () => {
  let store: FakeApiKeyStore;
  let keys: ApiKeyService;

  beforeEach(() => {
    store = new FakeApiKeyStore();
    keys = new ApiKeyService(store, { now: () => NOW });
  });

  describe('issue', () => {
    it('issues a key for a trimmed customer name, stores only its hash, and shows it once', async () => {
      const issued = await keys.issue('  acme  ', 'pro');
      expect(issued).toMatchObject({ customer: 'acme', plan: 'pro', created_customer: true, customer_id: 'cus_0' });
      expect(issued.prefix).toBe(displayPrefix(issued.key));
      expect(store.keys).toEqual([{ id: issued.key_id, customerId: 'cus_0', prefix: issued.prefix, keyHash: hashApiKey(issued.key), createdAt: NOW, revokedAt: null }]);
      expect(JSON.stringify(store.keys)).not.toContain(issued.key);
      expect(await keys.issue('acme', 'business')).toMatchObject({ customer_id: 'cus_0', plan: 'business', created_customer: false });
    });

    it('refuses an empty or too long name and an unknown plan with VALIDATION_ERROR, storing nothing', async () => {
      await expect(keys.issue('   ', 'pro')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
      await expect(keys.issue('x'.repeat(201), 'pro')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
      await expect(keys.issue('acme', 'platinum')).rejects.toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('free, pro, business, enterprise') });
      expect(store.customers).toEqual([]);
      expect(store.keys).toEqual([]);
    });
  });

  describe('authenticate', () => {
    it("answers the key's customer, its current plan and the key id", async () => {
      const issued = await keys.issue('acme', 'pro');
      await keys.issue('acme', 'enterprise');
      expect(await keys.authenticate(`Bearer ${issued.key}`)).toEqual({ customerId: issued.customer_id, plan: 'enterprise', keyId: issued.key_id });
    });

    it('answers UNAUTHORIZED with the Bearer challenge for a missing, misspelt, malformed, unknown or revoked key', async () => {
      const issued = await keys.issue('acme', 'pro');
      const unknown = issued.key.slice(0, -1) + (issued.key.endsWith('A') ? 'B' : 'A');
      const revoked = await keys.issue('acme', 'pro');
      await keys.revoke(revoked.key);
      for (const header of [undefined, '', ['Bearer a', 'Bearer b'], `bearer ${issued.key}`, `Bearer  ${issued.key}`, `Bearer\t${issued.key}`, 'Bearer th_live_short', `Bearer ${unknown}`, `Bearer ${revoked.key}`, `Bearer ${'x'.repeat(300)}`]) {
        const err = await keys.authenticate(header).then(() => null, (e: unknown) => e);
        expect(err).toMatchObject({ code: 'UNAUTHORIZED', headers: { 'WWW-Authenticate': 'Bearer realm="trendhooks"' } });
      }
    });
  });

  describe('revoke', () => {
    it('revokes by display prefix or whole key, once; a second revoke finds nothing', async () => {
      const a = await keys.issue('acme', 'pro');
      const b = await keys.issue('acme', 'pro');
      expect(await keys.revoke(a.prefix)).toBe(1);
      expect(store.keys.find((k) => k.id === a.key_id)!.revokedAt).toEqual(NOW);
      expect(await keys.revoke(a.prefix)).toBe(0);
      expect(await keys.revoke(` ${b.key} `)).toBe(1);
      expect(await keys.revoke(b.key)).toBe(0);
    });

    it('refuses a too short prefix with VALIDATION_ERROR, and an ambiguous prefix with CONFLICT', async () => {
      const a = await keys.issue('acme', 'pro');
      await expect(keys.revoke(a.prefix.slice(0, -1))).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
      store.keys.push({ ...store.keys[0], id: 'key_twin', keyHash: 'other' });
      await expect(keys.revoke(a.prefix)).rejects.toMatchObject({ code: 'CONFLICT' });
      expect(store.keys.every((k) => k.revokedAt === null)).toBe(true);
      expect(await keys.revoke(a.key)).toBe(1);
    });
  });
});

describe('PrivateDestinationsService', () => {
  let store: FakeApiKeyStore;
  let grants: PrivateDestinationsService;

  beforeEach(async () => {
    store = new FakeApiKeyStore();
    await new ApiKeyService(store, { now: () => NOW }).issue('acme', 'business');
    grants = new PrivateDestinationsService(store);
  });

  it('adds grants by customer name or id, replacing a grant for the same CIDR, and reads them per webhook', async () => {
    await grants.allow('acme', '10.0.0.0/8:443');
    expect(await grants.allow('cus_0', '192.168.1.0/24:8080')).toEqual({ customer: 'acme', customer_id: 'cus_0', grants: ['10.0.0.0/8:443', '192.168.1.0/24:8080'] });
    expect((await grants.allow('acme', '10.0.0.0/8:8443')).grants).toEqual(['192.168.1.0/24:8080', '10.0.0.0/8:8443']);
    store.webhookOwners.set('wh1', 'cus_0');
    expect((await grants.forWebhook('wh1')).map((g) => g.text)).toEqual(['192.168.1.0/24:8080', '10.0.0.0/8:8443']);
    expect(await grants.forWebhook('unknown')).toEqual([]);
    expect((await grants.forCustomer('cus_0')).map((g) => g.text)).toEqual(['192.168.1.0/24:8080', '10.0.0.0/8:8443']);
  });

  it('revokes one CIDR or all; false when there was nothing to revoke', async () => {
    await grants.allow('acme', '10.0.0.0/8:443');
    await grants.allow('acme', '192.168.1.0/24:8080');
    expect(await grants.revoke('acme', '10.0.0.0/8')).toBe(true);
    expect(await grants.revoke('acme', '10.0.0.0/8')).toBe(false);
    expect(await grants.revoke('acme', 'all')).toBe(true);
    expect(store.customers[0].privateAllow).toBeNull();
    expect(await grants.revoke('acme', 'all')).toBe(false);
  });

  it('answers NOT_FOUND for an unknown customer and VALIDATION_ERROR for a bad grant', async () => {
    await expect(grants.list('nobody')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(grants.list('cus_9')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(grants.allow('acme', 'not-a-cidr')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(grants.revoke('acme', 'not-a-cidr')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(store.customers[0].privateAllow).toBeNull();
  });
});
