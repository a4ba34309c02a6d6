import { MigrationInterface, QueryRunner } from 'typeorm';

/** DeliveriesKeyedById1795523787323 for a host's own migrations table (the core feature). */
export class TrendhooksDeliveriesKeyedById1796000000004 implements MigrationInterface {
  name = 'TrendhooksDeliveriesKeyedById1796000000004';

  async up(q: QueryRunner): Promise<void> {
    await q.query("DROP INDEX \"uq_deliveries_event_webhook\"");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("CREATE UNIQUE INDEX \"uq_deliveries_event_webhook\" ON \"deliveries\" (\"event_id\", \"webhook_id\") ");
  }
}
