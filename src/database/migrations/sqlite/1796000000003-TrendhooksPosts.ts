import { MigrationInterface, QueryRunner } from 'typeorm';

export class TrendhooksPosts1796000000003 implements MigrationInterface {
  name = 'TrendhooksPosts1796000000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"posts\" (\"id\" varchar(16) PRIMARY KEY NOT NULL, \"subreddit\" varchar(21) NOT NULL, \"author\" varchar(40) NOT NULL, \"author_key\" varchar(40) NOT NULL, \"title\" text NOT NULL, \"selftext\" text NOT NULL DEFAULT (''), \"url\" text NOT NULL, \"permalink\" text NOT NULL, \"score\" integer NOT NULL DEFAULT (0), \"num_comments\" integer NOT NULL DEFAULT (0), \"created_at\" bigint NOT NULL, \"first_seen_at\" bigint NOT NULL, \"updated_at\" bigint NOT NULL)");
    await q.query("CREATE INDEX \"idx_posts_author_created\" ON \"posts\" (\"author_key\", \"created_at\", \"id\") ");
    await q.query("CREATE INDEX \"idx_posts_subreddit_created\" ON \"posts\" (\"subreddit\", \"created_at\", \"id\") ");
    await q.query("CREATE TABLE \"trend_sources\" (\"subreddit\" varchar(21) PRIMARY KEY NOT NULL, \"lease_owner\" varchar(64), \"lease_until\" bigint, \"next_poll_at\" bigint, \"last_polled_at\" bigint, \"last_error\" varchar(300), \"consecutive_failures\" integer NOT NULL DEFAULT (0), \"updated_at\" bigint NOT NULL)");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP TABLE \"trend_sources\"");
    await q.query("DROP INDEX \"idx_posts_subreddit_created\"");
    await q.query("DROP INDEX \"idx_posts_author_created\"");
    await q.query("DROP TABLE \"posts\"");
  }
}
