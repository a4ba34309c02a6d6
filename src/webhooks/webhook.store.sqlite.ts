import { Injectable } from '@nestjs/common';
import { rawStatement } from '../database/data-source';
import type { PageRequest } from '../pagination/page';
import { WebhookEntity } from '../delivery/webhook.entity';
import type { WebhookListItem } from './webhook.store';
import { listItemFromRaw, listPageQuery, listPageSql, TypeOrmWebhookStore } from './webhook.store.typeorm';

const PAGE_SQL = listPageSql(() => '?');

@Injectable()
export class SqliteWebhookStore extends TypeOrmWebhookStore {
  /**
   * The list page straight on better-sqlite3's handle, rows as arrays (raw mode): same statement
   * and same items as the shared one, without TypeORM's query runner per call nor an object per
   * row (bench/api: the page's query cost fell by about a third). Errors are better-sqlite3's own
   * (SQLITE_BUSY …), which the database-unavailable classifier reads as before.
   */
  override async page(customerId: string, req: PageRequest): Promise<WebhookListItem[]> {
    const [sql, params] = listPageQuery(PAGE_SQL, customerId, req);
    return rawStatement(this.ds, sql).all(...params).map(listItemFromRaw);
  }

  /** SQLite runs one writer at a time, and the check and the insert are a single statement. */
  async insertWithinQuota(row: WebhookEntity, max: number): Promise<boolean> {
    const { cols, values } = this.quotaInsert(row);
    const params = values.map(() => '?').join(', ');
    const sqliteValues = values.map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v));
    const res: unknown[] = await this.ds.query(
      `INSERT INTO webhooks (${cols.join(', ')}) SELECT ${params} WHERE (SELECT COUNT(*) FROM webhooks WHERE customer_id = ?) < ? RETURNING id`,
      [...sqliteValues, row.customerId, max],
    );
    return res.length === 1;
  }
}
