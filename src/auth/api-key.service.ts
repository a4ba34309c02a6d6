import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import { AppError } from '../common/errors';
import { CLOCK, Clock } from '../common/clock';
import { newId } from '../common/ids';
import { PLANS, Plan } from './plans';
import { dialectOf, sqliteHandle } from '../database/data-source';
import { ApiKeyEntity } from './api-key.entity';
import { displayPrefix, generateApiKey, hashApiKey, isWellFormedApiKey, DISPLAY_PREFIX_LEN } from './api-key.format';
import { CustomerEntity } from './customer.entity';

export interface Principal {
  customerId: string;
  plan: Plan;
  keyId: string;
}

export interface IssuedKey {
  key: string;
  key_id: string;
  prefix: string;
  customer_id: string;
  customer: string;
  plan: Plan;
  created_customer: boolean;
}

@Injectable()
export class ApiKeyService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Operator issuance: creates the customer when new (or moves it to `plan`), returns the key once. */
  async issue(customerName: string, plan: string): Promise<IssuedKey> {
    const name = customerName.trim();
    if (name === '' || name.length > 200) throw new AppError('VALIDATION_ERROR', 'customer must be 1 to 200 characters');
    if (!(PLANS as readonly string[]).includes(plan)) {
      throw new AppError('VALIDATION_ERROR', `plan must be one of ${PLANS.join(', ')}`);
    }
    const key = generateApiKey();
    const now = this.clock.now();
    const keyRow = (customerId: string): ApiKeyEntity => ({ id: newId('key'), customerId, prefix: displayPrefix(key), keyHash: hashApiKey(key), createdAt: now, revokedAt: null });
    const issued = (row: ApiKeyEntity, customer: Pick<CustomerEntity, 'id' | 'name' | 'plan'>, created: boolean): IssuedKey => ({
      key, key_id: row.id, prefix: row.prefix, customer_id: customer.id, customer: customer.name, plan: customer.plan, created_customer: created,
    });
    if (dialectOf(this.ds) === 'sqlite') {
      // One synchronous transaction on the single shared connection: an async TypeORM transaction
      // there would take in the statements of requests served meanwhile (an API issuing keys in-process).
      const db = sqliteHandle(this.ds);
      return db.transaction(() => {
        let customer = db.prepare('SELECT id, name, plan FROM customers WHERE name = ?').get(name) as Pick<CustomerEntity, 'id' | 'name' | 'plan'> | undefined;
        const created = !customer;
        if (!customer) {
          customer = { id: newId('cus'), name, plan: plan as Plan };
          db.prepare('INSERT INTO customers (id, name, plan, created_at) VALUES (?, ?, ?, ?)').run(customer.id, name, plan, now.getTime());
        } else if (customer.plan !== plan) {
          db.prepare('UPDATE customers SET plan = ? WHERE id = ?').run(plan, customer.id);
          customer.plan = plan as Plan;
        }
        const row = keyRow(customer.id);
        db.prepare('INSERT INTO api_keys (id, customer_id, prefix, key_hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)').run(row.id, row.customerId, row.prefix, row.keyHash, now.getTime());
        return issued(row, customer, created);
      }).immediate();
    }
    return this.ds.transaction(async (em) => {
      const customers = em.getRepository(CustomerEntity);
      let customer = await customers.findOneBy({ name });
      const created = !customer;
      if (!customer) {
        customer = customers.create({ id: newId('cus'), name, plan: plan as Plan, createdAt: now });
        await customers.insert(customer);
      } else if (customer.plan !== plan) {
        await customers.update({ id: customer.id }, { plan: plan as Plan });
        customer.plan = plan as Plan;
      }
      const row = keyRow(customer.id);
      await em.getRepository(ApiKeyEntity).insert(row);
      return issued(row, customer, created);
    });
  }

  /** Revokes by the display prefix (or the whole key). Returns how many keys were revoked. */
  async revoke(prefixOrKey: string): Promise<number> {
    const value = prefixOrKey.trim();
    if (value.length < DISPLAY_PREFIX_LEN) {
      throw new AppError('VALIDATION_ERROR', `give at least the first ${DISPLAY_PREFIX_LEN} characters of the key`);
    }
    const repo = this.ds.getRepository(ApiKeyEntity);
    const where = value.length > DISPLAY_PREFIX_LEN ? { keyHash: hashApiKey(value), revokedAt: IsNull() } : { prefix: value, revokedAt: IsNull() };
    const matches = await repo.findBy(where);
    if (matches.length > 1) throw new AppError('CONFLICT', `prefix ${value} matches ${matches.length} keys; give the whole key`);
    if (matches.length === 0) return 0;
    await repo.update({ id: matches[0].id }, { revokedAt: this.clock.now() });
    return 1;
  }

  /**
   * `Authorization: Bearer <key>` → the caller, or UNAUTHORIZED with nothing about why beyond the shape.
   * Exactly `Bearer`, one space and the key: any other spelling (another case, tabs, extra blanks)
   * may be read differently by a proxy in front, so it is refused rather than guessed at.
   */
  async authenticate(header: string | string[] | undefined): Promise<Principal> {
    if (typeof header !== 'string' || header === '') throw unauthorized('missing Authorization: Bearer <API key> header');
    const m = header.length <= 200 ? /^Bearer ([^\s]+)$/.exec(header) : null;
    if (!m) throw unauthorized('Authorization header must be exactly "Bearer <API key>" (one space, no other blanks)');
    const key = m[1];
    if (!isWellFormedApiKey(key)) throw unauthorized('API key is malformed');
    const row = await this.ds
      .getRepository(ApiKeyEntity)
      .createQueryBuilder('k')
      .innerJoin(CustomerEntity, 'c', 'c.id = k.customer_id')
      .select(['k.id AS key_id', 'k.customer_id AS customer_id', 'k.revoked_at AS revoked_at', 'c.plan AS plan'])
      .where('k.key_hash = :hash', { hash: hashApiKey(key) })
      .getRawOne<{ key_id: string; customer_id: string; revoked_at: string | number | null; plan: Plan }>();
    if (!row || row.revoked_at !== null) throw unauthorized('API key is unknown or revoked');
    return { customerId: row.customer_id, plan: row.plan, keyId: row.key_id };
  }
}

/** 401 UNAUTHORIZED with the challenge every such answer carries. */
export function unauthorized(message: string): AppError {
  return new AppError('UNAUTHORIZED', message, { 'WWW-Authenticate': 'Bearer realm="trendhooks"' });
}
