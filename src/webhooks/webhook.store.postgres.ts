import { Injectable } from '@nestjs/common';
import { WebhookEntity } from './webhook.entity';
import { TypeOrmWebhookStore } from './webhook.store.typeorm';

/** The advisory-lock class of per-tenant webhook creates (two-key form: apart from the migrations' one-key lock). */
const WEBHOOK_QUOTA_LOCK = 7254032;

@Injectable()
export class PostgresWebhookStore extends TypeOrmWebhookStore {
  /**
   * Creates of one tenant are serialised on a transaction-scoped advisory lock keyed by its id, so the
   * count cannot go stale before the insert. The lock needs no row: a host's tenants have none in
   * `customers` (and that table may not exist at all without ApiKeysModule).
   */
  insertWithinQuota(row: WebhookEntity, max: number): Promise<boolean> {
    const { cols, values } = this.quotaInsert(row);
    return this.ds.transaction(async (em) => {
      await em.query('SELECT pg_advisory_xact_lock($1::int, hashtext($2::text))', [WEBHOOK_QUOTA_LOCK, row.customerId]);
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
