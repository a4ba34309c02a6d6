import { MigrationInterface, QueryRunner } from 'typeorm';

export class TrendhooksPosts1796000000003 implements MigrationInterface {
  name = 'TrendhooksPosts1796000000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"posts\" (\"id\" character varying(16) NOT NULL, \"subreddit\" character varying(21) NOT NULL, \"author\" character varying(40) NOT NULL, \"author_key\" character varying(40) NOT NULL, \"title\" text NOT NULL, \"selftext\" text NOT NULL DEFAULT '', \"url\" text NOT NULL, \"permalink\" text NOT NULL, \"score\" integer NOT NULL DEFAULT '0', \"num_comments\" integer NOT NULL DEFAULT '0', \"created_at\" bigint NOT NULL, \"first_seen_at\" bigint NOT NULL, \"updated_at\" bigint NOT NULL, CONSTRAINT \"PK_2829ac61eff60fcec60d7274b9e\" PRIMARY KEY (\"id\"))");
    await q.query("CREATE INDEX \"idx_posts_author_created\" ON \"posts\" (\"author_key\", \"created_at\", \"id\") ");
    await q.query("CREATE INDEX \"idx_posts_subreddit_created\" ON \"posts\" (\"subreddit\", \"created_at\", \"id\") ");
    await q.query("CREATE TABLE \"trend_sources\" (\"subreddit\" character varying(21) NOT NULL, \"lease_owner\" character varying(64), \"lease_until\" bigint, \"next_poll_at\" bigint, \"last_polled_at\" bigint, \"last_error\" character varying(300), \"consecutive_failures\" integer NOT NULL DEFAULT '0', \"updated_at\" bigint NOT NULL, CONSTRAINT \"PK_fefd81cd6d8759e35aca9ed98f8\" PRIMARY KEY (\"subreddit\"))");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP TABLE \"trend_sources\"");
    await q.query("DROP INDEX \"public\".\"idx_posts_subreddit_created\"");
    await q.query("DROP INDEX \"public\".\"idx_posts_author_created\"");
    await q.query("DROP TABLE \"posts\"");
  }
}
