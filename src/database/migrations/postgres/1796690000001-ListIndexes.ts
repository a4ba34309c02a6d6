import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes that keep the customer's list routes one bounded range each however much data the
 * customer made: the delivery log filtered by state, and the events history without test events.
 */
export class ListIndexes1796690000001 implements MigrationInterface {
  name = 'ListIndexes1796690000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE INDEX \"idx_deliveries_webhook_state_created\" ON \"deliveries\"  (\"webhook_id\", \"state\", \"created_at\", \"id\") ");
    await q.query("CREATE INDEX \"idx_events_trend_type_subreddit_created\" ON \"events\"  (\"type\", \"subreddit\", \"created_at\", \"id\") WHERE substr(id, 1, 9) <> 'evt_test_'");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP INDEX \"public\".\"idx_events_trend_type_subreddit_created\"");
    await q.query("DROP INDEX \"public\".\"idx_deliveries_webhook_state_created\"");
  }
}
