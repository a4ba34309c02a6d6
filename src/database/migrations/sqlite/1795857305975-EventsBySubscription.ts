import { MigrationInterface, QueryRunner } from 'typeorm';

export class EventsBySubscription1795857305975 implements MigrationInterface {
  name = 'EventsBySubscription1795857305975';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE INDEX \"idx_events_type_subreddit_created\" ON \"events\" (\"type\", \"subreddit\", \"created_at\", \"id\") ");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP INDEX \"idx_events_type_subreddit_created\"");
  }
}
