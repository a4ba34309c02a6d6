import { MigrationInterface, QueryRunner } from 'typeorm';

/** DeliveriesKeyedById1795523787790 for a host's own migrations table (the core feature). */
export class TrendhooksDeliveriesKeyedById1796000000004 implements MigrationInterface {
  name = 'TrendhooksDeliveriesKeyedById1796000000004';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE INDEX \"idx_deliveries_event\" ON \"deliveries\" (\"event_id\") ");
    await q.query("DROP INDEX \"uq_deliveries_event_webhook\"");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("CREATE UNIQUE INDEX \"uq_deliveries_event_webhook\" ON \"deliveries\" (\"event_id\", \"webhook_id\") ");
    await q.query("DROP INDEX \"idx_deliveries_event\"");
  }
}
