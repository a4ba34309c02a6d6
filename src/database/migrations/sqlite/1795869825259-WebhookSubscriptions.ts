import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A webhook becomes two rows: its subscription (event kind, subreddit), the webhook API's new
 * `webhook_subscriptions`, and its endpoint, what stays in `webhooks` (the delivery core's). Each
 * webhook's subscription is copied over before the columns go; a host's endpoint (no kind, `''`)
 * gets none. Ids are unchanged, so every secret stays bound to its row.
 */
export class WebhookSubscriptions1795869825259 implements MigrationInterface {
  name = 'WebhookSubscriptions1795869825259';

  async up(q: QueryRunner): Promise<void> {
    await q.query("DROP INDEX \"idx_webhooks_customer_id\"");
    await q.query("DROP INDEX \"idx_webhooks_event_subreddit\"");
    await q.query("CREATE TABLE \"webhook_subscriptions\" (\"webhook_id\" varchar(26) PRIMARY KEY NOT NULL, \"customer_id\" varchar(40) NOT NULL, \"event\" varchar(32) NOT NULL, \"subreddit\" varchar(21) NOT NULL, \"created_at\" bigint NOT NULL)");
    await q.query("CREATE INDEX \"idx_webhook_subscriptions_event_subreddit\" ON \"webhook_subscriptions\" (\"event\", \"subreddit\") ");
    await q.query("CREATE INDEX \"idx_webhook_subscriptions_customer\" ON \"webhook_subscriptions\" (\"customer_id\", \"webhook_id\") ");
    await q.query("INSERT INTO \"webhook_subscriptions\" (\"webhook_id\", \"customer_id\", \"event\", \"subreddit\", \"created_at\") SELECT \"id\", \"customer_id\", \"event\", \"subreddit\", \"created_at\" FROM \"webhooks\" WHERE \"event\" <> ''");
    await q.query("CREATE TABLE \"temporary_webhooks\" (\"id\" varchar(26) PRIMARY KEY NOT NULL, \"customer_id\" varchar(40) NOT NULL, \"url\" varchar(2048) NOT NULL, \"allow_nonstandard_port\" boolean NOT NULL DEFAULT (0), \"secret\" varchar(255) NOT NULL, \"previous_secret\" varchar(255), \"previous_secret_expires_at\" bigint, \"created_at\" bigint NOT NULL, \"last_delivery_at\" bigint, \"last_status\" varchar(16), \"last_response_code\" integer, \"disabled_at\" bigint, \"disabled_reason\" varchar(16), \"failing_since\" bigint, \"failure_periods\" integer NOT NULL DEFAULT (0), \"last_failure_period\" integer)");
    await q.query("INSERT INTO \"temporary_webhooks\"(\"id\", \"customer_id\", \"url\", \"allow_nonstandard_port\", \"secret\", \"previous_secret\", \"previous_secret_expires_at\", \"created_at\", \"last_delivery_at\", \"last_status\", \"last_response_code\", \"disabled_at\", \"disabled_reason\", \"failing_since\", \"failure_periods\", \"last_failure_period\") SELECT \"id\", \"customer_id\", \"url\", \"allow_nonstandard_port\", \"secret\", \"previous_secret\", \"previous_secret_expires_at\", \"created_at\", \"last_delivery_at\", \"last_status\", \"last_response_code\", \"disabled_at\", \"disabled_reason\", \"failing_since\", \"failure_periods\", \"last_failure_period\" FROM \"webhooks\"");
    await q.query("DROP TABLE \"webhooks\"");
    await q.query("ALTER TABLE \"temporary_webhooks\" RENAME TO \"webhooks\"");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("ALTER TABLE \"webhooks\" RENAME TO \"temporary_webhooks\"");
    await q.query("CREATE TABLE \"webhooks\" (\"id\" varchar(26) PRIMARY KEY NOT NULL, \"customer_id\" varchar(40) NOT NULL, \"url\" varchar(2048) NOT NULL, \"event\" varchar(32) NOT NULL, \"subreddit\" varchar(21) NOT NULL, \"allow_nonstandard_port\" boolean NOT NULL DEFAULT (0), \"secret\" varchar(255) NOT NULL, \"previous_secret\" varchar(255), \"previous_secret_expires_at\" bigint, \"created_at\" bigint NOT NULL, \"last_delivery_at\" bigint, \"last_status\" varchar(16), \"last_response_code\" integer, \"disabled_at\" bigint, \"disabled_reason\" varchar(16), \"failing_since\" bigint, \"failure_periods\" integer NOT NULL DEFAULT (0), \"last_failure_period\" integer)");
    await q.query("INSERT INTO \"webhooks\"(\"id\", \"customer_id\", \"url\", \"event\", \"subreddit\", \"allow_nonstandard_port\", \"secret\", \"previous_secret\", \"previous_secret_expires_at\", \"created_at\", \"last_delivery_at\", \"last_status\", \"last_response_code\", \"disabled_at\", \"disabled_reason\", \"failing_since\", \"failure_periods\", \"last_failure_period\") SELECT t.\"id\", t.\"customer_id\", t.\"url\", COALESCE(s.\"event\", ''), COALESCE(s.\"subreddit\", ''), t.\"allow_nonstandard_port\", t.\"secret\", t.\"previous_secret\", t.\"previous_secret_expires_at\", t.\"created_at\", t.\"last_delivery_at\", t.\"last_status\", t.\"last_response_code\", t.\"disabled_at\", t.\"disabled_reason\", t.\"failing_since\", t.\"failure_periods\", t.\"last_failure_period\" FROM \"temporary_webhooks\" t LEFT JOIN \"webhook_subscriptions\" s ON s.\"webhook_id\" = t.\"id\"");
    await q.query("DROP TABLE \"temporary_webhooks\"");
    await q.query("DROP INDEX \"idx_webhook_subscriptions_customer\"");
    await q.query("DROP INDEX \"idx_webhook_subscriptions_event_subreddit\"");
    await q.query("DROP TABLE \"webhook_subscriptions\"");
    await q.query("CREATE INDEX \"idx_webhooks_event_subreddit\" ON \"webhooks\" (\"event\", \"subreddit\") ");
    await q.query("CREATE INDEX \"idx_webhooks_customer_id\" ON \"webhooks\" (\"customer_id\", \"id\") ");
  }
}
