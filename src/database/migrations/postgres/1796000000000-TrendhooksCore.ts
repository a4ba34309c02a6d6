import { MigrationInterface, QueryRunner } from 'typeorm';

export class TrendhooksCore1796000000000 implements MigrationInterface {
  name = 'TrendhooksCore1796000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"webhooks\" (\"id\" character varying(26) NOT NULL, \"customer_id\" character varying(40) NOT NULL, \"url\" character varying(2048) NOT NULL, \"event\" character varying(32) NOT NULL, \"subreddit\" character varying(21) NOT NULL, \"allow_nonstandard_port\" boolean NOT NULL DEFAULT false, \"secret\" character varying(255) NOT NULL, \"previous_secret\" character varying(255), \"previous_secret_expires_at\" bigint, \"created_at\" bigint NOT NULL, \"last_delivery_at\" bigint, \"last_status\" character varying(16), \"last_response_code\" integer, CONSTRAINT \"PK_9e8795cfc899ab7bdaa831e8527\" PRIMARY KEY (\"id\"))");
    await q.query("CREATE INDEX \"idx_webhooks_event_subreddit\" ON \"webhooks\" (\"event\", \"subreddit\") ");
    await q.query("CREATE INDEX \"idx_webhooks_customer_id\" ON \"webhooks\" (\"customer_id\", \"id\") ");
    await q.query("CREATE TABLE \"delivery_attempts\" (\"id\" character varying(26) NOT NULL, \"delivery_id\" character varying(40) NOT NULL, \"attempt_no\" integer NOT NULL, \"started_at\" bigint NOT NULL, \"duration_ms\" integer NOT NULL, \"status_code\" integer, \"outcome\" character varying(16) NOT NULL, \"error_class\" character varying(40), \"response_excerpt\" text, CONSTRAINT \"PK_41eba4eb5401d72860f7cd9a7ac\" PRIMARY KEY (\"id\"))");
    await q.query("CREATE INDEX \"idx_attempts_delivery\" ON \"delivery_attempts\" (\"delivery_id\", \"attempt_no\") ");
    await q.query("CREATE TABLE \"deliveries\" (\"id\" character varying(40) NOT NULL, \"event_id\" character varying(64) NOT NULL, \"webhook_id\" character varying(26) NOT NULL, \"customer_id\" character varying(40) NOT NULL, \"state\" character varying(16) NOT NULL, \"attempts\" integer NOT NULL DEFAULT '0', \"next_attempt_at\" bigint, \"lease_owner\" character varying(64), \"last_error\" character varying(300), \"last_response_code\" integer, \"created_at\" bigint NOT NULL, \"updated_at\" bigint NOT NULL, \"delivered_at\" bigint, CONSTRAINT \"PK_a6ef225c5c5f0974e503bfb731f\" PRIMARY KEY (\"id\"))");
    await q.query("CREATE UNIQUE INDEX \"uq_deliveries_event_webhook\" ON \"deliveries\" (\"event_id\", \"webhook_id\") ");
    await q.query("CREATE INDEX \"idx_deliveries_webhook_created\" ON \"deliveries\" (\"webhook_id\", \"created_at\", \"id\") ");
    await q.query("CREATE INDEX \"idx_deliveries_due\" ON \"deliveries\" (\"state\", \"next_attempt_at\") ");
    await q.query("CREATE TABLE \"events\" (\"id\" character varying(64) NOT NULL, \"type\" character varying(32) NOT NULL, \"subreddit\" character varying(21) NOT NULL, \"payload\" text NOT NULL, \"created_at\" bigint NOT NULL, CONSTRAINT \"PK_40731c7151fe4be3116e45ddf73\" PRIMARY KEY (\"id\"))");
    await q.query("CREATE INDEX \"idx_events_subreddit_created\" ON \"events\" (\"subreddit\", \"created_at\") ");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP INDEX \"public\".\"idx_events_subreddit_created\"");
    await q.query("DROP TABLE \"events\"");
    await q.query("DROP INDEX \"public\".\"idx_deliveries_due\"");
    await q.query("DROP INDEX \"public\".\"idx_deliveries_webhook_created\"");
    await q.query("DROP INDEX \"public\".\"uq_deliveries_event_webhook\"");
    await q.query("DROP TABLE \"deliveries\"");
    await q.query("DROP INDEX \"public\".\"idx_attempts_delivery\"");
    await q.query("DROP TABLE \"delivery_attempts\"");
    await q.query("DROP INDEX \"public\".\"idx_webhooks_customer_id\"");
    await q.query("DROP INDEX \"public\".\"idx_webhooks_event_subreddit\"");
    await q.query("DROP TABLE \"webhooks\"");
  }
}
