import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A webhook becomes two rows: its subscription (event kind, subreddit), the webhook API's new
 * `webhook_subscriptions`, and its endpoint, what stays in `webhooks` (the delivery core's). Each
 * webhook's subscription is copied over before the columns go; a host's endpoint (no kind, `''`)
 * gets none. Ids are unchanged, so every secret stays bound to its row.
 */
export class WebhookSubscriptions1795869825819 implements MigrationInterface {
  name = 'WebhookSubscriptions1795869825819';

  async up(q: QueryRunner): Promise<void> {
    await q.query("DROP INDEX \"public\".\"idx_webhooks_event_subreddit\"");
    await q.query("DROP INDEX \"public\".\"idx_webhooks_customer_id\"");
    await q.query("CREATE TABLE \"webhook_subscriptions\" (\"webhook_id\" character varying(26) NOT NULL, \"customer_id\" character varying(40) NOT NULL, \"event\" character varying(32) NOT NULL, \"subreddit\" character varying(21) NOT NULL, \"created_at\" bigint NOT NULL, CONSTRAINT \"PK_100682668c7aaed6104d18acd68\" PRIMARY KEY (\"webhook_id\"))");
    await q.query("CREATE INDEX \"idx_webhook_subscriptions_event_subreddit\" ON \"webhook_subscriptions\"  (\"event\", \"subreddit\") ");
    await q.query("CREATE INDEX \"idx_webhook_subscriptions_customer\" ON \"webhook_subscriptions\"  (\"customer_id\", \"webhook_id\") ");
    await q.query("INSERT INTO \"webhook_subscriptions\" (\"webhook_id\", \"customer_id\", \"event\", \"subreddit\", \"created_at\") SELECT \"id\", \"customer_id\", \"event\", \"subreddit\", \"created_at\" FROM \"webhooks\" WHERE \"event\" <> ''");
    await q.query("ALTER TABLE \"webhooks\" DROP COLUMN \"event\"");
    await q.query("ALTER TABLE \"webhooks\" DROP COLUMN \"subreddit\"");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("ALTER TABLE \"webhooks\" ADD \"subreddit\" character varying(21) NOT NULL DEFAULT ''");
    await q.query("ALTER TABLE \"webhooks\" ADD \"event\" character varying(32) NOT NULL DEFAULT ''");
    await q.query("UPDATE \"webhooks\" w SET \"event\" = s.\"event\", \"subreddit\" = s.\"subreddit\" FROM \"webhook_subscriptions\" s WHERE s.\"webhook_id\" = w.\"id\"");
    await q.query("ALTER TABLE \"webhooks\" ALTER COLUMN \"subreddit\" DROP DEFAULT");
    await q.query("ALTER TABLE \"webhooks\" ALTER COLUMN \"event\" DROP DEFAULT");
    await q.query("DROP INDEX \"public\".\"idx_webhook_subscriptions_customer\"");
    await q.query("DROP INDEX \"public\".\"idx_webhook_subscriptions_event_subreddit\"");
    await q.query("DROP TABLE \"webhook_subscriptions\"");
    await q.query("CREATE INDEX \"idx_webhooks_customer_id\" ON \"webhooks\" USING btree (\"customer_id\", \"id\") ");
    await q.query("CREATE INDEX \"idx_webhooks_event_subreddit\" ON \"webhooks\" USING btree (\"event\", \"subreddit\") ");
  }
}
