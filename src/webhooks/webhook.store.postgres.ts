import { Injectable } from '@nestjs/common';
import { pgPool } from '../database/data-source';
import type { PageRequest } from '../pagination/page';
import { WebhookSubscriptionEntity } from './subscription.entity';
import { listPageQuery, listPageSql, subscriberPageSql, SubscriptionPageRow, TypeOrmWebhookStore } from './webhook.store.typeorm';

const PAGE_SQL = listPageSql((n) => `$${n}`);
const SUBSCRIBERS = { name: 'trendhooks_subscribers_page', text: subscriberPageSql((n) => `$${n}`) };

/** The advisory-lock class of per-tenant webhook creates (two-key form: apart from the migrations' one-key lock). */
const WEBHOOK_QUOTA_LOCK = 7254032;

@Injectable()
export class PostgresWebhookStore extends TypeOrmWebhookStore {
  /**
   * The list page straight on node-postgres' pool, rows as arrays, without TypeORM's query runner
   * per call nor a keyed object per row (the SQLite store does the same). Errors are node-postgres'
   * own, which the database-unavailable classifier reads as TypeORM's wrapped ones.
   */
  protected async subscriptionPage(customerId: string, req: PageRequest): Promise<SubscriptionPageRow[]> {
    const [text, values] = listPageQuery(PAGE_SQL, customerId, req);
    const { rows } = await pgPool(this.ds).query<SubscriptionPageRow>({ text, values, rowMode: 'array' });
    return rows;
  }

  protected async subscriberPage(event: string, subreddit: string, after: string, limit: number): Promise<[string, string][]> {
    const { rows } = await pgPool(this.ds).query<[string, string]>({ ...SUBSCRIBERS, values: [event, subreddit, after, limit], rowMode: 'array' });
    return rows;
  }

  /**
   * Creates of one tenant are serialised on a transaction-scoped advisory lock keyed by its id, so the
   * count cannot go stale before the insert. The lock needs no row: a host's tenants have none in
   * `customers` (and that table may not exist at all without ApiKeysModule).
   */
  protected insertSubscriptionWithinQuota(row: WebhookSubscriptionEntity, max: number): Promise<boolean> {
    return this.ds.transaction(async (em) => {
      await em.query('SELECT pg_advisory_xact_lock($1::int, hashtext($2::text))', [WEBHOOK_QUOTA_LOCK, row.customerId]);
      // INSERT … SELECT gives parameters no column type, so each is cast explicitly.
      const res: unknown[] = await em.query(
        `INSERT INTO webhook_subscriptions (webhook_id, customer_id, event, subreddit, created_at)
         SELECT $1::varchar, $2::varchar, $3::varchar, $4::varchar, $5::bigint
         WHERE (SELECT COUNT(*) FROM webhook_subscriptions WHERE customer_id = $2::varchar) < $6::int RETURNING webhook_id`,
        [row.webhookId, row.customerId, row.event, row.subreddit, row.createdAt.getTime(), max],
      );
      return res.length === 1;
    });
  }
}
