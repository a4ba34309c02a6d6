import { Injectable } from '@nestjs/common';
import { WebhookEntity } from './webhook.entity';
import { TypeOrmWebhookStore } from './webhook.store.typeorm';

@Injectable()
export class PostgresWebhookStore extends TypeOrmWebhookStore {
  /** Creates of one customer are serialised on its row lock, so the count cannot go stale before the insert. */
  insertWithinQuota(row: WebhookEntity, max: number): Promise<boolean> {
    const { cols, values } = this.quotaInsert(row);
    return this.ds.transaction(async (em) => {
      await em.query('SELECT id FROM customers WHERE id = $1 FOR UPDATE', [row.customerId]);
      // INSERT … SELECT gives parameters no column type, so each is cast explicitly.
      const types = ['varchar', 'varchar', 'varchar', 'varchar', 'varchar', 'boolean', 'varchar', 'bigint'];
      const params = types.map((t, i) => `$${i + 1}::${t}`).join(', ');
      const res: unknown[] = await em.query(
        `INSERT INTO webhooks (${cols.join(', ')}) SELECT ${params} WHERE (SELECT COUNT(*) FROM webhooks WHERE customer_id = $2::varchar) < $${values.length + 1}::int RETURNING id`,
        [...values, max],
      );
      return res.length === 1;
    });
  }
}
