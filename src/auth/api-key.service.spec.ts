import type { Plan } from './plans';
import type { ApiKeyEntity } from './api-key.entity';
import { displayPrefix, hashApiKey } from './api-key.format';
import * as format from './api-key.format';
import { ApiKeyService, MAX_API_KEY_CACHE_TTL_MS } from './api-key.service';
import { ApiKeyStore, CustomerRef, KeyOwner } from './api-key.store';
import type { CustomerEntity } from './customer.entity';
import { PrivateDestinationsService } from './private-destinations.service';

const NOW = new Date(Date.UTC(2025, 0, 1));

/** In-memory ApiKeyStore: the contract the conformance suite checks on the real databases. */
class FakeApiKeyStore extends ApiKeyStore {
  customers: CustomerEntity[] = [];
  keys: ApiKeyEntity[] = [];

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
  async isActive(keyId: string) {
    return this.keys.some((k) => k.id === keyId && k.revokedAt === null);
  }
  async oldestActiveKey(customerId: string) {
    return this.keys.find((k) => k.customerId === customerId && k.revokedAt === null)?.id ?? null;
  }
  async countCustomersWithActiveKeys() {
    return new Set(this.keys.filter((k) => k.revokedAt === null).map((k) => k.customerId)).size;
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
      // A name of a customer id's form could pass for another customer in operator commands.
      for (const name of ['cus_0', 'CUS_01ARZ3NDEKTSV4RRFFQ69G5FAV', ' cus_x ']) {
        await expect(keys.issue(name, 'pro')).rejects.toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('must not start with "cus_"') });
      }
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

  describe('key cache', () => {
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const countLookups = () => {
      const calls = { n: 0 };
      const find = store.findByHash.bind(store);
      store.findByHash = (hash: string) => {
        calls.n++;
        return find(hash);
      };
      return calls;
    };

    it('looks a key up once per TTL, and refuses a key revoked behind its back (another process) once the TTL is over', async () => {
      const cached = new ApiKeyService(store, { now: () => NOW }, { apiKeyCacheTtlMs: 150 });
      const issued = await cached.issue('acme', 'pro');
      const lookups = countLookups();
      for (let i = 0; i < 5; i++) expect(await cached.authenticate(`Bearer ${issued.key}`)).toMatchObject({ keyId: issued.key_id });
      expect(lookups.n).toBe(1);
      // The CLI of another process revokes it: this process does not hear of it.
      await store.revoke(issued.key_id, NOW);
      const revokedAt = Date.now();
      let refusedAfter = -1;
      while (Date.now() - revokedAt < 1000) {
        const err = await cached.authenticate(`Bearer ${issued.key}`).then(() => null, (e: unknown) => e);
        if (err) {
          expect(err).toMatchObject({ code: 'UNAUTHORIZED' });
          refusedAfter = Date.now() - revokedAt;
          break;
        }
        await sleep(10);
      }
      expect(refusedAfter).toBeGreaterThanOrEqual(0);
      expect(refusedAfter).toBeLessThanOrEqual(150 + 100);
      // Revoked stays refused.
      await expect(cached.authenticate(`Bearer ${issued.key}`)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    });

    it('refuses at once a key revoked through the service, and sees a plan change made through it at once', async () => {
      const cached = new ApiKeyService(store, { now: () => NOW }, { apiKeyCacheTtlMs: MAX_API_KEY_CACHE_TTL_MS });
      const a = await cached.issue('acme', 'pro');
      expect(await cached.authenticate(`Bearer ${a.key}`)).toMatchObject({ plan: 'pro' });
      await cached.issue('acme', 'business');
      expect(await cached.authenticate(`Bearer ${a.key}`)).toMatchObject({ plan: 'business' });
      expect(await cached.revoke(a.prefix)).toBe(1);
      await expect(cached.authenticate(`Bearer ${a.key}`)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    });

    it('never remembers an unknown key: a key stored meanwhile (issued by another process) works at once', async () => {
      const cached = new ApiKeyService(store, { now: () => NOW }, { apiKeyCacheTtlMs: MAX_API_KEY_CACHE_TTL_MS });
      const elsewhere = new ApiKeyService(store, { now: () => NOW }, { apiKeyCacheTtlMs: 0 });
      const issued = await elsewhere.issue('acme', 'pro');
      const saved = store.keys.splice(0);
      await expect(cached.authenticate(`Bearer ${issued.key}`)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      store.keys.push(...saved);
      expect(await cached.authenticate(`Bearer ${issued.key}`)).toMatchObject({ keyId: issued.key_id });
    });

    it('answers a cached entry only for the very key: another well-formed key of the same prefix is looked up and refused', async () => {
      const cached = new ApiKeyService(store, { now: () => NOW }, { apiKeyCacheTtlMs: MAX_API_KEY_CACHE_TTL_MS });
      const issued = await cached.issue('acme', 'pro');
      expect(await cached.authenticate(`Bearer ${issued.key}`)).toMatchObject({ keyId: issued.key_id });
      const other = (await new ApiKeyService(new FakeApiKeyStore(), { now: () => NOW }).issue('x', 'pro')).key;
      const sameStart = issued.key.slice(0, 20) + other.slice(20, 40);
      const lookups = countLookups();
      await expect(cached.authenticate(`Bearer ${sameStart}`)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      await expect(cached.authenticate(`Bearer ${other}`)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      expect(lookups.n).toBe(1); // `sameStart` fails its checksum before any lookup; `other` is looked up
    });

    it('checks the checksum of a key it looks up, not again while the key is cached', async () => {
      const cached = new ApiKeyService(store, { now: () => NOW }, { apiKeyCacheTtlMs: MAX_API_KEY_CACHE_TTL_MS });
      const issued = await cached.issue('acme', 'pro');
      const checks = jest.spyOn(format, 'isWellFormedApiKey');
      try {
        for (let i = 0; i < 3; i++) expect(await cached.authenticate(`Bearer ${issued.key}`)).toMatchObject({ keyId: issued.key_id });
        expect(checks).toHaveBeenCalledTimes(1);
      } finally {
        checks.mockRestore();
      }
    });

    it('with a TTL of 0 asks the store every time, and refuses a TTL over the bound', async () => {
      const uncached = new ApiKeyService(store, { now: () => NOW }, { apiKeyCacheTtlMs: 0 });
      const issued = await uncached.issue('acme', 'pro');
      const lookups = countLookups();
      for (let i = 0; i < 3; i++) await uncached.authenticate(`Bearer ${issued.key}`);
      expect(lookups.n).toBe(3);
      expect(() => new ApiKeyService(store, { now: () => NOW }, { apiKeyCacheTtlMs: MAX_API_KEY_CACHE_TTL_MS + 1 })).toThrow(/apiKeyCacheTtlMs/);
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

  it('adds grants by customer name or id, replacing a grant for the same CIDR, and reads them per customer', async () => {
    await grants.allow('acme', '10.0.0.0/8:443');
    expect(await grants.allow('cus_0', '192.168.1.0/24:8080')).toEqual({ customer: 'acme', customer_id: 'cus_0', grants: ['10.0.0.0/8:443', '192.168.1.0/24:8080'] });
    expect((await grants.allow('acme', '10.0.0.0/8:8443')).grants).toEqual(['192.168.1.0/24:8080', '10.0.0.0/8:8443']);
    expect(await grants.forCustomer('cus_unknown')).toEqual([]);
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
