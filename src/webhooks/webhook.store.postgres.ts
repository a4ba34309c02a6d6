import { Injectable } from '@nestjs/common';
import { pgPool } from '../database/data-source';
import type { PageRequest } from '../pagination/page';
import { WebhookEntity } from './webhook.entity';
import type { WebhookListItem } from './webhook.store';
import { LIST_COLUMNS, listItemFromRaw, TypeOrmWebhookStore } from './webhook.store.typeorm';

const BASE = `SELECT ${LIST_COLUMNS} FROM webhooks WHERE customer_id = $1`;
const PAGE_SQL = {
  first: `${BASE} ORDER BY id DESC LIMIT $2`,
  after: `${BASE} AND id < $2 ORDER BY id DESC LIMIT $3`,
  before: `${BASE} AND id > $2 ORDER BY id ASC LIMIT $3`,
};

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
    const [text, values] = req.before
      ? [PAGE_SQL.before, [customerId, String(req.before[0]), req.limit + 1]]
      : req.after
        ? [PAGE_SQL.after, [customerId, String(req.after[0]), req.limit + 1]]
        : [PAGE_SQL.first, [customerId, req.limit + 1]];
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
