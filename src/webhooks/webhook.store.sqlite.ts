import { Injectable } from '@nestjs/common';
import { rawStatement } from '../database/data-source';
import type { PageRequest } from '../pagination/page';
import { WebhookSubscriptionEntity } from './subscription.entity';
import { listPageQuery, listPageSql, subscriberPageSql, SubscriptionPageRow, TypeOrmWebhookStore } from './webhook.store.typeorm';

const PAGE_SQL = listPageSql(() => '?');
const SUBSCRIBERS_SQL = subscriberPageSql(() => '?');

@Injectable()
export class SqliteWebhookStore extends TypeOrmWebhookStore {
  /**
   * The list page straight on better-sqlite3's handle, rows as arrays (raw mode), without
   * TypeORM's query runner per call nor an object per row. Errors are better-sqlite3's own
   * (SQLITE_BUSY …), which the database-unavailable classifier reads as before.
   */
  protected async subscriptionPage(customerId: string, req: PageRequest): Promise<SubscriptionPageRow[]> {
    const [sql, params] = listPageQuery(PAGE_SQL, customerId, req);
    return rawStatement(this.ds, sql).all(...params) as SubscriptionPageRow[];
  }

  protected async subscriberPage(event: string, subreddit: string, after: string, limit: number): Promise<[string, string][]> {
    return rawStatement(this.ds, SUBSCRIBERS_SQL).all(event, subreddit, after, limit) as [string, string][];
  }

  /** SQLite runs one writer at a time, and the check and the insert are a single statement. */
  protected async insertSubscriptionWithinQuota(row: WebhookSubscriptionEntity, max: number): Promise<boolean> {
    const res: unknown[] = await this.ds.query(
      `INSERT INTO webhook_subscriptions (webhook_id, customer_id, event, subreddit, created_at)
       SELECT ?, ?, ?, ?, ? WHERE (SELECT COUNT(*) FROM webhook_subscriptions WHERE customer_id = ?) < ? RETURNING webhook_id`,
      [row.webhookId, row.customerId, row.event, row.subreddit, row.createdAt.getTime(), row.customerId, max],
    );
    return res.length === 1;
  }
}
