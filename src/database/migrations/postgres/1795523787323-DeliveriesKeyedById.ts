import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drops the unique index on deliveries (event_id, webhook_id): a delivery's id is derived from
 * that pair, so the primary key already refuses a second delivery of an event to a webhook, and
 * the second index cost one more entry per insert and per claim or outcome update (none of which
 * are HOT). Unqualified, like the CREATE it undoes, so it follows the session's search_path.
 */
export class DeliveriesKeyedById1795523787323 implements MigrationInterface {
  name = 'DeliveriesKeyedById1795523787323';

  async up(q: QueryRunner): Promise<void> {
    await q.query("DROP INDEX \"uq_deliveries_event_webhook\"");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("CREATE UNIQUE INDEX \"uq_deliveries_event_webhook\" ON \"deliveries\" (\"event_id\", \"webhook_id\") ");
  }
}
