import { MigrationInterface, QueryRunner } from 'typeorm';

export class SecretsAtRest1795468933188 implements MigrationInterface {
  name = 'SecretsAtRest1795468933188';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"temporary_customers\" (\"id\" varchar(40) PRIMARY KEY NOT NULL, \"name\" varchar(200) NOT NULL, \"plan\" varchar(20) NOT NULL, \"created_at\" bigint NOT NULL, \"private_allow\" text, CONSTRAINT \"UQ_b942d55b92ededa770041db9ded\" UNIQUE (\"name\"))");
    await q.query("INSERT INTO \"temporary_customers\"(\"id\", \"name\", \"plan\", \"created_at\") SELECT \"id\", \"name\", \"plan\", \"created_at\" FROM \"customers\"");
    await q.query("DROP TABLE \"customers\"");
    await q.query("ALTER TABLE \"temporary_customers\" RENAME TO \"customers\"");
    await q.query("DROP INDEX \"idx_webhooks_customer_id\"");
    await q.query("DROP INDEX \"idx_webhooks_event_subreddit\"");
    await q.query("CREATE TABLE \"temporary_webhooks\" (\"id\" varchar(26) PRIMARY KEY NOT NULL, \"customer_id\" varchar(40) NOT NULL, \"url\" varchar(2048) NOT NULL, \"event\" varchar(32) NOT NULL, \"subreddit\" varchar(21) NOT NULL, \"allow_nonstandard_port\" boolean NOT NULL DEFAULT (0), \"secret\" varchar(255) NOT NULL, \"previous_secret\" varchar(255), \"previous_secret_expires_at\" bigint, \"created_at\" bigint NOT NULL, \"last_delivery_at\" bigint, \"last_status\" varchar(16), \"last_response_code\" integer)");
    await q.query("INSERT INTO \"temporary_webhooks\"(\"id\", \"customer_id\", \"url\", \"event\", \"subreddit\", \"allow_nonstandard_port\", \"secret\", \"previous_secret\", \"previous_secret_expires_at\", \"created_at\", \"last_delivery_at\", \"last_status\", \"last_response_code\") SELECT \"id\", \"customer_id\", \"url\", \"event\", \"subreddit\", \"allow_nonstandard_port\", \"secret\", \"previous_secret\", \"previous_secret_expires_at\", \"created_at\", \"last_delivery_at\", \"last_status\", \"last_response_code\" FROM \"webhooks\"");
    await q.query("DROP TABLE \"webhooks\"");
    await q.query("ALTER TABLE \"temporary_webhooks\" RENAME TO \"webhooks\"");
    await q.query("CREATE INDEX \"idx_webhooks_customer_id\" ON \"webhooks\" (\"customer_id\", \"id\") ");
    await q.query("CREATE INDEX \"idx_webhooks_event_subreddit\" ON \"webhooks\" (\"event\", \"subreddit\") ");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP INDEX \"idx_webhooks_event_subreddit\"");
    await q.query("DROP INDEX \"idx_webhooks_customer_id\"");
    await q.query("ALTER TABLE \"webhooks\" RENAME TO \"temporary_webhooks\"");
    await q.query("CREATE TABLE \"webhooks\" (\"id\" varchar(26) PRIMARY KEY NOT NULL, \"customer_id\" varchar(40) NOT NULL, \"url\" varchar(2048) NOT NULL, \"event\" varchar(32) NOT NULL, \"subreddit\" varchar(21) NOT NULL, \"allow_nonstandard_port\" boolean NOT NULL DEFAULT (0), \"secret\" varchar(80) NOT NULL, \"previous_secret\" varchar(80), \"previous_secret_expires_at\" bigint, \"created_at\" bigint NOT NULL, \"last_delivery_at\" bigint, \"last_status\" varchar(16), \"last_response_code\" integer)");
    await q.query("INSERT INTO \"webhooks\"(\"id\", \"customer_id\", \"url\", \"event\", \"subreddit\", \"allow_nonstandard_port\", \"secret\", \"previous_secret\", \"previous_secret_expires_at\", \"created_at\", \"last_delivery_at\", \"last_status\", \"last_response_code\") SELECT \"id\", \"customer_id\", \"url\", \"event\", \"subreddit\", \"allow_nonstandard_port\", \"secret\", \"previous_secret\", \"previous_secret_expires_at\", \"created_at\", \"last_delivery_at\", \"last_status\", \"last_response_code\" FROM \"temporary_webhooks\"");
    await q.query("DROP TABLE \"temporary_webhooks\"");
    await q.query("CREATE INDEX \"idx_webhooks_event_subreddit\" ON \"webhooks\" (\"event\", \"subreddit\") ");
    await q.query("CREATE INDEX \"idx_webhooks_customer_id\" ON \"webhooks\" (\"customer_id\", \"id\") ");
    await q.query("ALTER TABLE \"customers\" RENAME TO \"temporary_customers\"");
    await q.query("CREATE TABLE \"customers\" (\"id\" varchar(40) PRIMARY KEY NOT NULL, \"name\" varchar(200) NOT NULL, \"plan\" varchar(20) NOT NULL, \"created_at\" bigint NOT NULL, CONSTRAINT \"UQ_b942d55b92ededa770041db9ded\" UNIQUE (\"name\"))");
    await q.query("INSERT INTO \"customers\"(\"id\", \"name\", \"plan\", \"created_at\") SELECT \"id\", \"name\", \"plan\", \"created_at\" FROM \"temporary_customers\"");
    await q.query("DROP TABLE \"temporary_customers\"");
  }
}
