import { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial1795339168006 implements MigrationInterface {
  name = 'Initial1795339168006';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"api_keys\" (\"id\" varchar(40) PRIMARY KEY NOT NULL, \"customer_id\" varchar(40) NOT NULL, \"prefix\" varchar(20) NOT NULL, \"key_hash\" varchar(64) NOT NULL, \"created_at\" bigint NOT NULL, \"revoked_at\" bigint)");
    await q.query("CREATE INDEX \"idx_api_keys_customer\" ON \"api_keys\" (\"customer_id\") ");
    await q.query("CREATE UNIQUE INDEX \"uq_api_keys_hash\" ON \"api_keys\" (\"key_hash\") ");
    await q.query("CREATE TABLE \"customers\" (\"id\" varchar(40) PRIMARY KEY NOT NULL, \"name\" varchar(200) NOT NULL, \"plan\" varchar(20) NOT NULL, \"created_at\" bigint NOT NULL, CONSTRAINT \"UQ_b942d55b92ededa770041db9ded\" UNIQUE (\"name\"))");
    await q.query("CREATE TABLE \"posts\" (\"id\" varchar(16) PRIMARY KEY NOT NULL, \"subreddit\" varchar(21) NOT NULL, \"author\" varchar(40) NOT NULL, \"author_key\" varchar(40) NOT NULL, \"title\" text NOT NULL, \"selftext\" text NOT NULL DEFAULT (''), \"url\" text NOT NULL, \"permalink\" text NOT NULL, \"score\" integer NOT NULL DEFAULT (0), \"num_comments\" integer NOT NULL DEFAULT (0), \"created_at\" bigint NOT NULL, \"first_seen_at\" bigint NOT NULL, \"updated_at\" bigint NOT NULL)");
    await q.query("CREATE INDEX \"idx_posts_author_created\" ON \"posts\" (\"author_key\", \"created_at\", \"id\") ");
    await q.query("CREATE INDEX \"idx_posts_subreddit_created\" ON \"posts\" (\"subreddit\", \"created_at\", \"id\") ");
    await q.query("CREATE TABLE \"webhooks\" (\"id\" varchar(26) PRIMARY KEY NOT NULL, \"customer_id\" varchar(40) NOT NULL, \"url\" varchar(2048) NOT NULL, \"event\" varchar(32) NOT NULL, \"subreddit\" varchar(21) NOT NULL, \"allow_nonstandard_port\" boolean NOT NULL DEFAULT (0), \"secret\" varchar(80) NOT NULL, \"previous_secret\" varchar(80), \"previous_secret_expires_at\" bigint, \"created_at\" bigint NOT NULL, \"last_delivery_at\" bigint, \"last_status\" varchar(16), \"last_response_code\" integer)");
    await q.query("CREATE INDEX \"idx_webhooks_event_subreddit\" ON \"webhooks\" (\"event\", \"subreddit\") ");
    await q.query("CREATE INDEX \"idx_webhooks_customer_id\" ON \"webhooks\" (\"customer_id\", \"id\") ");
    await q.query("CREATE TABLE \"settings\" (\"key\" varchar(100) PRIMARY KEY NOT NULL, \"value\" text NOT NULL)");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP TABLE \"settings\"");
    await q.query("DROP INDEX \"idx_webhooks_customer_id\"");
    await q.query("DROP INDEX \"idx_webhooks_event_subreddit\"");
    await q.query("DROP TABLE \"webhooks\"");
    await q.query("DROP INDEX \"idx_posts_subreddit_created\"");
    await q.query("DROP INDEX \"idx_posts_author_created\"");
    await q.query("DROP TABLE \"posts\"");
    await q.query("DROP TABLE \"customers\"");
    await q.query("DROP INDEX \"uq_api_keys_hash\"");
    await q.query("DROP INDEX \"idx_api_keys_customer\"");
    await q.query("DROP TABLE \"api_keys\"");
  }
}
