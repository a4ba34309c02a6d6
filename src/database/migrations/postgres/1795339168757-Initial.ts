import { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial1795339168757 implements MigrationInterface {
  name = 'Initial1795339168757';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"api_keys\" (\"id\" character varying(40) NOT NULL, \"customer_id\" character varying(40) NOT NULL, \"prefix\" character varying(20) NOT NULL, \"key_hash\" character varying(64) NOT NULL, \"created_at\" bigint NOT NULL, \"revoked_at\" bigint, CONSTRAINT \"PK_5c8a79801b44bd27b79228e1dad\" PRIMARY KEY (\"id\"))");
    await q.query("CREATE INDEX \"idx_api_keys_customer\" ON \"api_keys\" (\"customer_id\") ");
    await q.query("CREATE UNIQUE INDEX \"uq_api_keys_hash\" ON \"api_keys\" (\"key_hash\") ");
    await q.query("CREATE TABLE \"customers\" (\"id\" character varying(40) NOT NULL, \"name\" character varying(200) NOT NULL, \"plan\" character varying(20) NOT NULL, \"created_at\" bigint NOT NULL, CONSTRAINT \"UQ_b942d55b92ededa770041db9ded\" UNIQUE (\"name\"), CONSTRAINT \"PK_133ec679a801fab5e070f73d3ea\" PRIMARY KEY (\"id\"))");
    await q.query("CREATE TABLE \"posts\" (\"id\" character varying(16) NOT NULL, \"subreddit\" character varying(21) NOT NULL, \"author\" character varying(40) NOT NULL, \"author_key\" character varying(40) NOT NULL, \"title\" text NOT NULL, \"selftext\" text NOT NULL DEFAULT '', \"url\" text NOT NULL, \"permalink\" text NOT NULL, \"score\" integer NOT NULL DEFAULT '0', \"num_comments\" integer NOT NULL DEFAULT '0', \"created_at\" bigint NOT NULL, \"first_seen_at\" bigint NOT NULL, \"updated_at\" bigint NOT NULL, CONSTRAINT \"PK_2829ac61eff60fcec60d7274b9e\" PRIMARY KEY (\"id\"))");
    await q.query("CREATE INDEX \"idx_posts_author_created\" ON \"posts\" (\"author_key\", \"created_at\", \"id\") ");
    await q.query("CREATE INDEX \"idx_posts_subreddit_created\" ON \"posts\" (\"subreddit\", \"created_at\", \"id\") ");
    await q.query("CREATE TABLE \"webhooks\" (\"id\" character varying(26) NOT NULL, \"customer_id\" character varying(40) NOT NULL, \"url\" character varying(2048) NOT NULL, \"event\" character varying(32) NOT NULL, \"subreddit\" character varying(21) NOT NULL, \"allow_nonstandard_port\" boolean NOT NULL DEFAULT false, \"secret\" character varying(80) NOT NULL, \"previous_secret\" character varying(80), \"previous_secret_expires_at\" bigint, \"created_at\" bigint NOT NULL, \"last_delivery_at\" bigint, \"last_status\" character varying(16), \"last_response_code\" integer, CONSTRAINT \"PK_9e8795cfc899ab7bdaa831e8527\" PRIMARY KEY (\"id\"))");
    await q.query("CREATE INDEX \"idx_webhooks_event_subreddit\" ON \"webhooks\" (\"event\", \"subreddit\") ");
    await q.query("CREATE INDEX \"idx_webhooks_customer_id\" ON \"webhooks\" (\"customer_id\", \"id\") ");
    await q.query("CREATE TABLE \"settings\" (\"key\" character varying(100) NOT NULL, \"value\" text NOT NULL, CONSTRAINT \"PK_c8639b7626fa94ba8265628f214\" PRIMARY KEY (\"key\"))");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP TABLE \"settings\"");
    await q.query("DROP INDEX \"public\".\"idx_webhooks_customer_id\"");
    await q.query("DROP INDEX \"public\".\"idx_webhooks_event_subreddit\"");
    await q.query("DROP TABLE \"webhooks\"");
    await q.query("DROP INDEX \"public\".\"idx_posts_subreddit_created\"");
    await q.query("DROP INDEX \"public\".\"idx_posts_author_created\"");
    await q.query("DROP TABLE \"posts\"");
    await q.query("DROP TABLE \"customers\"");
    await q.query("DROP INDEX \"public\".\"uq_api_keys_hash\"");
    await q.query("DROP INDEX \"public\".\"idx_api_keys_customer\"");
    await q.query("DROP TABLE \"api_keys\"");
  }
}
