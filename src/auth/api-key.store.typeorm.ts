import { InjectTrendhooksDataSource } from '../database/data-source.token';
import { DataSource, IsNull } from 'typeorm';
import type { Plan } from './plans';
import { ApiKeyEntity } from './api-key.entity';
import { ApiKeyStore, KeyOwner } from './api-key.store';
import { CustomerEntity } from './customer.entity';

/** The ApiKeyStore queries both dialects run alike, written once with TypeORM; only issuance differs. */
export abstract class TypeOrmApiKeyStore extends ApiKeyStore {
  constructor(@InjectTrendhooksDataSource() protected readonly ds: DataSource) {
    super();
  }

  private get keys() {
    return this.ds.getRepository(ApiKeyEntity);
  }

  private get customers() {
    return this.ds.getRepository(CustomerEntity);
  }

  async findByHash(keyHash: string): Promise<KeyOwner | null> {
    const row = await this.keys
      .createQueryBuilder('k')
      .innerJoin(CustomerEntity, 'c', 'c.id = k.customer_id')
      .select(['k.id AS key_id', 'k.customer_id AS customer_id', 'k.revoked_at AS revoked_at', 'c.plan AS plan'])
      .where('k.key_hash = :hash', { hash: keyHash })
      .getRawOne<{ key_id: string; customer_id: string; revoked_at: string | number | null; plan: Plan }>();
    return row ? { keyId: row.key_id, customerId: row.customer_id, plan: row.plan, revoked: row.revoked_at !== null } : null;
  }

  findActive(match: { prefix: string } | { keyHash: string }): Promise<ApiKeyEntity[]> {
    return this.keys.findBy({ ...match, revokedAt: IsNull() });
  }

  async revoke(keyId: string, at: Date): Promise<void> {
    await this.keys.update({ id: keyId }, { revokedAt: at });
  }

  async isActive(keyId: string): Promise<boolean> {
    return (await this.keys.countBy({ id: keyId, revokedAt: IsNull() })) > 0;
  }

  async oldestActiveKey(customerId: string): Promise<string | null> {
    const row = await this.keys.findOne({ select: { id: true }, where: { customerId, revokedAt: IsNull() }, order: { createdAt: 'ASC', id: 'ASC' } });
    return row?.id ?? null;
  }

  async countCustomersWithActiveKeys(): Promise<number> {
    const row = await this.keys.createQueryBuilder('k').select('COUNT(DISTINCT k.customer_id)', 'n').where('k.revoked_at IS NULL').getRawOne<{ n: string | number }>();
    return Number(row?.n ?? 0);
  }

  findCustomerByName(name: string): Promise<CustomerEntity | null> {
    return this.customers.findOneBy({ name });
  }

  findCustomerById(id: string): Promise<CustomerEntity | null> {
    return this.customers.findOneBy({ id });
  }

  async setPrivateAllow(customerId: string, privateAllow: string | null): Promise<void> {
    await this.customers.update({ id: customerId }, { privateAllow });
  }

  async privateAllowOfCustomer(customerId: string): Promise<string | null> {
    const row = await this.customers.findOne({ select: { id: true, privateAllow: true }, where: { id: customerId } });
    return row?.privateAllow ?? null;
  }
}
