import { MigrationInterface, QueryRunner } from 'typeorm';

export class TrendhooksCore1796000000000 implements MigrationInterface {
  name = 'TrendhooksCore1796000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"webhooks\" (\"id\" varchar(26) PRIMARY KEY NOT NULL, \"customer_id\" varchar(40) NOT NULL, \"url\" varchar(2048) NOT NULL, \"event\" varchar(32) NOT NULL, \"subreddit\" varchar(21) NOT NULL, \"allow_nonstandard_port\" boolean NOT NULL DEFAULT (0), \"secret\" varchar(255) NOT NULL, \"previous_secret\" varchar(255), \"previous_secret_expires_at\" bigint, \"created_at\" bigint NOT NULL, \"last_delivery_at\" bigint, \"last_status\" varchar(16), \"last_response_code\" integer)");
    await q.query("CREATE INDEX \"idx_webhooks_event_subreddit\" ON \"webhooks\" (\"event\", \"subreddit\") ");
    await q.query("CREATE INDEX \"idx_webhooks_customer_id\" ON \"webhooks\" (\"customer_id\", \"id\") ");
    await q.query("CREATE TABLE \"delivery_attempts\" (\"id\" varchar(26) PRIMARY KEY NOT NULL, \"delivery_id\" varchar(40) NOT NULL, \"attempt_no\" integer NOT NULL, \"started_at\" bigint NOT NULL, \"duration_ms\" integer NOT NULL, \"status_code\" integer, \"outcome\" varchar(16) NOT NULL, \"error_class\" varchar(40), \"response_excerpt\" text)");
    await q.query("CREATE INDEX \"idx_attempts_delivery\" ON \"delivery_attempts\" (\"delivery_id\", \"attempt_no\") ");
    await q.query("CREATE TABLE \"deliveries\" (\"id\" varchar(40) PRIMARY KEY NOT NULL, \"event_id\" varchar(64) NOT NULL, \"webhook_id\" varchar(26) NOT NULL, \"customer_id\" varchar(40) NOT NULL, \"state\" varchar(16) NOT NULL, \"attempts\" integer NOT NULL DEFAULT (0), \"next_attempt_at\" bigint, \"lease_owner\" varchar(64), \"last_error\" varchar(300), \"last_response_code\" integer, \"created_at\" bigint NOT NULL, \"updated_at\" bigint NOT NULL, \"delivered_at\" bigint)");
    await q.query("CREATE UNIQUE INDEX \"uq_deliveries_event_webhook\" ON \"deliveries\" (\"event_id\", \"webhook_id\") ");
    await q.query("CREATE INDEX \"idx_deliveries_webhook_created\" ON \"deliveries\" (\"webhook_id\", \"created_at\", \"id\") ");
    await q.query("CREATE INDEX \"idx_deliveries_due\" ON \"deliveries\" (\"state\", \"next_attempt_at\") ");
    await q.query("CREATE TABLE \"events\" (\"id\" varchar(64) PRIMARY KEY NOT NULL, \"type\" varchar(32) NOT NULL, \"subreddit\" varchar(21) NOT NULL, \"payload\" text NOT NULL, \"created_at\" bigint NOT NULL)");
    await q.query("CREATE INDEX \"idx_events_subreddit_created\" ON \"events\" (\"subreddit\", \"created_at\") ");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP INDEX \"idx_events_subreddit_created\"");
    await q.query("DROP TABLE \"events\"");
    await q.query("DROP INDEX \"idx_deliveries_due\"");
    await q.query("DROP INDEX \"idx_deliveries_webhook_created\"");
    await q.query("DROP INDEX \"uq_deliveries_event_webhook\"");
    await q.query("DROP TABLE \"deliveries\"");
    await q.query("DROP INDEX \"idx_attempts_delivery\"");
    await q.query("DROP TABLE \"delivery_attempts\"");
    await q.query("DROP INDEX \"idx_webhooks_customer_id\"");
    await q.query("DROP INDEX \"idx_webhooks_event_subreddit\"");
    await q.query("DROP TABLE \"webhooks\"");
  }
}
