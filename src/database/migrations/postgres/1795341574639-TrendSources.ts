import { MigrationInterface, QueryRunner } from 'typeorm';

export class TrendSources1795341574639 implements MigrationInterface {
  name = 'TrendSources1795341574639';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"trend_sources\" (\"subreddit\" character varying(21) NOT NULL, \"lease_owner\" character varying(64), \"lease_until\" bigint, \"next_poll_at\" bigint, \"last_polled_at\" bigint, \"last_error\" character varying(300), \"consecutive_failures\" integer NOT NULL DEFAULT '0', \"updated_at\" bigint NOT NULL, CONSTRAINT \"PK_fefd81cd6d8759e35aca9ed98f8\" PRIMARY KEY (\"subreddit\"))");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP TABLE \"trend_sources\"");
  }
}
