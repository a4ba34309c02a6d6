import { MigrationInterface, QueryRunner } from 'typeorm';

/** `trend_sources.posts_unreachable`: posts estimated lost behind Reddit's 1,000-item listing cap (issue 43). */
export class TrendSourcesUnreachable1795900000000 implements MigrationInterface {
  name = 'TrendSourcesUnreachable1795900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query("ALTER TABLE \"trend_sources\" ADD COLUMN \"posts_unreachable\" integer NOT NULL DEFAULT (0)");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("ALTER TABLE \"trend_sources\" DROP COLUMN \"posts_unreachable\"");
  }
}
