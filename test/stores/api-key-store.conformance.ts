import { ApiKeyEntity } from '../../src/auth/api-key.entity';
import { displayPrefix, generateApiKey, hashApiKey } from '../../src/auth/api-key.format';
import type { ApiKeyStore } from '../../src/auth/api-key.store';
import { CustomerEntity } from '../../src/auth/customer.entity';
import { newId } from '../../src/common/ids';
import { StoreFixture, uniqueName } from './store-fixture';

const AT = new Date(Date.UTC(2025, 0, 1));

function newKey(): Omit<ApiKeyEntity, 'customerId'> & { key: string } {
  const key = generateApiKey();
  return { key, id: newId('key'), prefix: displayPrefix(key), keyHash: hashApiKey(key), createdAt: AT, revokedAt: null };
}

/** What every ApiKeyStore implementation must do, whatever its database. */
export function apiKeyStoreConformance(f: StoreFixture<ApiKeyStore>): void {
  const create = (name: string, plan: 'free' | 'pro' | 'business', { key: _key, ...row } = newKey()) => f.store.createKey(name, plan, row);

  it('creates a new customer with its first key, which is then found by hash', async () => {
    const name = uniqueName('acme');
    const k = newKey();
    const { customer, created } = await create(name, 'pro', k);
    expect(created).toBe(true);
    expect(customer).toMatchObject({ name, plan: 'pro' });
    expect(customer.id).toMatch(/^cus_/);
    expect(await f.store.findByHash(k.keyHash)).toEqual({ keyId: k.id, customerId: customer.id, plan: 'pro', revoked: false });
    expect(await f.store.findCustomerByName(name)).toMatchObject({ id: customer.id, name, plan: 'pro', privateAllow: null, createdAt: AT });
  });

  it('adds a key to an existing customer and moves it to the new plan, for every key it has', async () => {
    const name = uniqueName('acme');
    const first = newKey();
    const a = await create(name, 'free', first);
    const second = newKey();
    const b = await create(name, 'business', second);
    expect(b).toEqual({ created: false, customer: { id: a.customer.id, name, plan: 'business' } });
    for (const k of [first, second]) expect(await f.store.findByHash(k.keyHash)).toMatchObject({ customerId: a.customer.id, plan: 'business' });
    const same = await create(name, 'business');
    expect(same).toMatchObject({ created: false, customer: { id: a.customer.id, plan: 'business' } });
  });

  it('finds nothing for an unknown hash', async () => {
    expect(await f.store.findByHash(hashApiKey(generateApiKey()))).toBeNull();
  });

  it('finds active keys by prefix or hash, and a revoked key no longer, though its hash still resolves as revoked', async () => {
    const k = newKey();
    await create(uniqueName('rev'), 'pro', k);
    expect((await f.store.findActive({ prefix: k.prefix })).map((r) => r.id)).toEqual([k.id]);
    expect((await f.store.findActive({ keyHash: k.keyHash })).map((r) => r.id)).toEqual([k.id]);
    await f.store.revoke(k.id, new Date(AT.getTime() + 1000));
    expect(await f.store.findActive({ prefix: k.prefix })).toEqual([]);
    expect(await f.store.findActive({ keyHash: k.keyHash })).toEqual([]);
    expect(await f.store.findByHash(k.keyHash)).toMatchObject({ keyId: k.id, revoked: true });
    const [row] = await f.ds.getRepository(ApiKeyEntity).findBy({ id: k.id });
    expect(row.revokedAt).toEqual(new Date(AT.getTime() + 1000));
  });

  it('counts the customers holding a key not revoked, once each', async () => {
    const before = await f.store.countCustomersWithActiveKeys();
    const [k1, k2, k3] = [newKey(), newKey(), newKey()];
    const two = uniqueName('count');
    await create(two, 'pro', k1);
    await create(two, 'pro', k2);
    await create(uniqueName('count'), 'pro', k3);
    expect(await f.store.countCustomersWithActiveKeys()).toBe(before + 2);
    await f.store.revoke(k3.id, AT);
    await f.store.revoke(k1.id, AT);
    expect(await f.store.countCustomersWithActiveKeys()).toBe(before + 1);
    await f.store.revoke(k2.id, AT);
    expect(await f.store.countCustomersWithActiveKeys()).toBe(before);
  });

  it('concurrent first keys for one customer name make one customer; a loser stores nothing', async () => {
    const name = uniqueName('burst');
    const keys = Array.from({ length: 10 }, () => newKey());
    const results = await Promise.allSettled(keys.map((k) => create(name, 'pro', k)));
    const ok = results.flatMap((r, i) => (r.status === 'fulfilled' ? [{ ...r.value, key: keys[i] }] : []));
    expect(ok.length).toBeGreaterThan(0);
    expect(new Set(ok.map((r) => r.customer.id)).size).toBe(1);
    expect(ok.filter((r) => r.created)).toHaveLength(1);
    expect(await f.ds.getRepository(CustomerEntity).countBy({ name })).toBe(1);
    const stored = await f.ds.getRepository(ApiKeyEntity).findBy({ customerId: ok[0].customer.id });
    expect(stored.map((r) => r.id).sort()).toEqual(ok.map((r) => r.key.id).sort());
  });

  it('finds customers by name and by id, and nothing for another', async () => {
    const name = uniqueName('find');
    const { customer } = await create(name, 'free');
    expect(await f.store.findCustomerById(customer.id)).toMatchObject({ id: customer.id, name });
    expect(await f.store.findCustomerByName(uniqueName('none'))).toBeNull();
    expect(await f.store.findCustomerById(newId('cus'))).toBeNull();
  });

  it("keeps a customer's private allow-list", async () => {
    const { customer } = await create(uniqueName('priv'), 'business');
    const { customer: other } = await create(uniqueName('priv'), 'business');
    expect(await f.store.privateAllowOfCustomer(customer.id)).toBeNull();
    await f.store.setPrivateAllow(customer.id, '10.0.0.0/8:443 192.168.1.0/24:8080');
    expect(await f.store.privateAllowOfCustomer(customer.id)).toBe('10.0.0.0/8:443 192.168.1.0/24:8080');
    expect(await f.store.privateAllowOfCustomer(other.id)).toBeNull();
    await f.store.setPrivateAllow(customer.id, null);
    expect(await f.store.privateAllowOfCustomer(customer.id)).toBeNull();
    expect(await f.store.privateAllowOfCustomer(newId('cus'))).toBeNull();
  });
}
