import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Replaces the unique index on deliveries (event_id, webhook_id) with a plain one on event_id: a
 * delivery's id is derived from that pair, so the primary key already refuses a second delivery
 * of an event to a webhook; a replay still looks up when the event's fan-out started (FAN_OUT_AT),
 * which needs event_id alone. Not known to the drift check (the entity declares it
 * `synchronize: false`, PostgreSQL having no such index).
 */
export class DeliveriesKeyedById1795523787790 implements MigrationInterface {
  name = 'DeliveriesKeyedById1795523787790';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE INDEX \"idx_deliveries_event\" ON \"deliveries\" (\"event_id\") ");
    await q.query("DROP INDEX \"uq_deliveries_event_webhook\"");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("CREATE UNIQUE INDEX \"uq_deliveries_event_webhook\" ON \"deliveries\" (\"event_id\", \"webhook_id\") ");
    await q.query("DROP INDEX \"idx_deliveries_event\"");
  }
}
