import { Injectable } from '@nestjs/common';
import { newId } from '../common/ids';
import type { Plan } from './plans';
import { sqliteHandle } from '../database/data-source';
import type { ApiKeyEntity } from './api-key.entity';
import type { CustomerRef } from './api-key.store';
import { TypeOrmApiKeyStore } from './api-key.store.typeorm';

@Injectable()
export class SqliteApiKeyStore extends TypeOrmApiKeyStore {
  /**
   * One synchronous transaction on the single shared connection: an async TypeORM transaction
   * there would take in the statements of requests served meanwhile (an API issuing keys in-process).
   */
  async createKey(name: string, plan: Plan, key: Omit<ApiKeyEntity, 'customerId'>): Promise<{ customer: CustomerRef; created: boolean }> {
    const db = sqliteHandle(this.ds);
    return db.transaction(() => {
      let customer = db.prepare('SELECT id, name, plan FROM customers WHERE name = ?').get(name) as CustomerRef | undefined;
      const created = !customer;
      if (!customer) {
        customer = { id: newId('cus'), name, plan };
        db.prepare('INSERT INTO customers (id, name, plan, created_at) VALUES (?, ?, ?, ?)').run(customer.id, name, plan, key.createdAt.getTime());
      } else if (customer.plan !== plan) {
        db.prepare('UPDATE customers SET plan = ? WHERE id = ?').run(plan, customer.id);
        customer.plan = plan;
      }
      db.prepare('INSERT INTO api_keys (id, customer_id, prefix, key_hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)').run(key.id, customer.id, key.prefix, key.keyHash, key.createdAt.getTime());
      return { customer, created };
    }).immediate();
  }
}
