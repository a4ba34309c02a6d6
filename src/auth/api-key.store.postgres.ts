import { Injectable } from '@nestjs/common';
import { newId } from '../common/ids';
import type { Plan } from './plans';
import { ApiKeyEntity } from './api-key.entity';
import type { CustomerRef } from './api-key.store';
import { TypeOrmApiKeyStore } from './api-key.store.typeorm';
import { CustomerEntity } from './customer.entity';

@Injectable()
export class PostgresApiKeyStore extends TypeOrmApiKeyStore {
  /** A racing first insert of the same name fails on the unique name and rolls back whole. */
  createKey(name: string, plan: Plan, key: Omit<ApiKeyEntity, 'customerId'>): Promise<{ customer: CustomerRef; created: boolean }> {
    return this.ds.transaction(async (em) => {
      const customers = em.getRepository(CustomerEntity);
      let customer = await customers.findOneBy({ name });
      const created = !customer;
      if (!customer) {
        customer = customers.create({ id: newId('cus'), name, plan, createdAt: key.createdAt });
        await customers.insert(customer);
      } else if (customer.plan !== plan) {
        await customers.update({ id: customer.id }, { plan });
        customer.plan = plan;
      }
      await em.getRepository(ApiKeyEntity).insert({ ...key, customerId: customer.id });
      return { customer: { id: customer.id, name: customer.name, plan: customer.plan }, created };
    });
  }
}
