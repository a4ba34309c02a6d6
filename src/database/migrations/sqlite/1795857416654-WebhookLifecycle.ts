import { MigrationInterface, QueryRunner } from 'typeorm';

export class WebhookLifecycle1795857416654 implements MigrationInterface {
  name = 'WebhookLifecycle1795857416654';

  async up(q: QueryRunner): Promise<void> {
    await q.query("DROP INDEX \"idx_webhooks_event_subreddit\"");
    await q.query("DROP INDEX \"idx_webhooks_customer_id\"");
    await q.query("CREATE TABLE \"temporary_webhooks\" (\"id\" varchar(26) PRIMARY KEY NOT NULL, \"customer_id\" varchar(40) NOT NULL, \"url\" varchar(2048) NOT NULL, \"event\" varchar(32) NOT NULL, \"subreddit\" varchar(21) NOT NULL, \"allow_nonstandard_port\" boolean NOT NULL DEFAULT (0), \"secret\" varchar(255) NOT NULL, \"previous_secret\" varchar(255), \"previous_secret_expires_at\" bigint, \"created_at\" bigint NOT NULL, \"last_delivery_at\" bigint, \"last_status\" varchar(16), \"last_response_code\" integer, \"disabled_at\" bigint, \"disabled_reason\" varchar(16), \"failing_since\" bigint, \"failure_periods\" integer NOT NULL DEFAULT (0), \"last_failure_period\" integer)");
    await q.query("INSERT INTO \"temporary_webhooks\"(\"id\", \"customer_id\", \"url\", \"event\", \"subreddit\", \"allow_nonstandard_port\", \"secret\", \"previous_secret\", \"previous_secret_expires_at\", \"created_at\", \"last_delivery_at\", \"last_status\", \"last_response_code\") SELECT \"id\", \"customer_id\", \"url\", \"event\", \"subreddit\", \"allow_nonstandard_port\", \"secret\", \"previous_secret\", \"previous_secret_expires_at\", \"created_at\", \"last_delivery_at\", \"last_status\", \"last_response_code\" FROM \"webhooks\"");
    await q.query("DROP TABLE \"webhooks\"");
    await q.query("ALTER TABLE \"temporary_webhooks\" RENAME TO \"webhooks\"");
    await q.query("CREATE INDEX \"idx_webhooks_event_subreddit\" ON \"webhooks\" (\"event\", \"subreddit\") ");
    await q.query("CREATE INDEX \"idx_webhooks_customer_id\" ON \"webhooks\" (\"customer_id\", \"id\") ");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP INDEX \"idx_webhooks_customer_id\"");
    await q.query("DROP INDEX \"idx_webhooks_event_subreddit\"");
    await q.query("ALTER TABLE \"webhooks\" RENAME TO \"temporary_webhooks\"");
    await q.query("CREATE TABLE \"webhooks\" (\"id\" varchar(26) PRIMARY KEY NOT NULL, \"customer_id\" varchar(40) NOT NULL, \"url\" varchar(2048) NOT NULL, \"event\" varchar(32) NOT NULL, \"subreddit\" varchar(21) NOT NULL, \"allow_nonstandard_port\" boolean NOT NULL DEFAULT (0), \"secret\" varchar(255) NOT NULL, \"previous_secret\" varchar(255), \"previous_secret_expires_at\" bigint, \"created_at\" bigint NOT NULL, \"last_delivery_at\" bigint, \"last_status\" varchar(16), \"last_response_code\" integer)");
    await q.query("INSERT INTO \"webhooks\"(\"id\", \"customer_id\", \"url\", \"event\", \"subreddit\", \"allow_nonstandard_port\", \"secret\", \"previous_secret\", \"previous_secret_expires_at\", \"created_at\", \"last_delivery_at\", \"last_status\", \"last_response_code\") SELECT \"id\", \"customer_id\", \"url\", \"event\", \"subreddit\", \"allow_nonstandard_port\", \"secret\", \"previous_secret\", \"previous_secret_expires_at\", \"created_at\", \"last_delivery_at\", \"last_status\", \"last_response_code\" FROM \"temporary_webhooks\"");
    await q.query("DROP TABLE \"temporary_webhooks\"");
    await q.query("CREATE INDEX \"idx_webhooks_customer_id\" ON \"webhooks\" (\"customer_id\", \"id\") ");
    await q.query("CREATE INDEX \"idx_webhooks_event_subreddit\" ON \"webhooks\" (\"event\", \"subreddit\") ");
  }
}
