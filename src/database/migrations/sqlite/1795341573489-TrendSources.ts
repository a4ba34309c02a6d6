import { MigrationInterface, QueryRunner } from 'typeorm';

export class TrendSources1795341573489 implements MigrationInterface {
  name = 'TrendSources1795341573489';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"trend_sources\" (\"subreddit\" varchar(21) PRIMARY KEY NOT NULL, \"lease_owner\" varchar(64), \"lease_until\" bigint, \"next_poll_at\" bigint, \"last_polled_at\" bigint, \"last_error\" varchar(300), \"consecutive_failures\" integer NOT NULL DEFAULT (0), \"updated_at\" bigint NOT NULL)");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP TABLE \"trend_sources\"");
  }
}
