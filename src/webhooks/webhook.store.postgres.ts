import { Injectable } from '@nestjs/common';
import { pgPool } from '../database/data-source';
import type { PageRequest } from '../pagination/page';
import { WebhookEntity } from '../delivery/webhook.entity';
import type { WebhookListItem } from './webhook.store';
import { listItemFromRaw, listPageQuery, listPageSql, TypeOrmWebhookStore } from './webhook.store.typeorm';

const PAGE_SQL = listPageSql((n) => `$${n}`);

/** The advisory-lock class of per-tenant webhook creates (two-key form: apart from the migrations' one-key lock). */
const WEBHOOK_QUOTA_LOCK = 7254032;

@Injectable()
export class PostgresWebhookStore extends TypeOrmWebhookStore {
  /**
   * The list page straight on node-postgres' pool, rows as arrays: the same statement and items as
   * the shared one, without TypeORM's query runner per call nor a keyed object per row (the SQLite
   * store does the same). Errors are node-postgres' own, which the database-unavailable classifier
   * reads as TypeORM's wrapped ones.
   */
  override async page(customerId: string, req: PageRequest): Promise<WebhookListItem[]> {
    const [text, values] = listPageQuery(PAGE_SQL, customerId, req);
    const { rows } = await pgPool(this.ds).query<unknown[]>({ text, values, rowMode: 'array' });
    return rows.map(listItemFromRaw);
  }

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
