import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The operators' stored webhook.disabled notifications (operations_notifications).
 */
export class OperationsNotifications1796677311764 implements MigrationInterface {
  name = 'OperationsNotifications1796677311764';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"operations_notifications\" (\"id\" varchar(40) PRIMARY KEY NOT NULL, \"webhook_id\" varchar(26) NOT NULL, \"customer_id\" varchar(40) NOT NULL, \"state\" varchar(16) NOT NULL, \"slot_at\" bigint NOT NULL, \"next_attempt_at\" bigint, \"attempts\" integer NOT NULL DEFAULT (0), \"lease_owner\" varchar(64), \"event\" text NOT NULL, \"disables\" integer NOT NULL DEFAULT (1), \"gone_count\" integer NOT NULL DEFAULT (0), \"failing_count\" integer NOT NULL DEFAULT (0), \"first_disabled_at\" bigint NOT NULL, \"last_error\" varchar(300), \"created_at\" bigint NOT NULL, \"updated_at\" bigint NOT NULL, \"sent_at\" bigint)");
    await q.query("CREATE UNIQUE INDEX \"uq_operations_notifications_open\" ON \"operations_notifications\" (\"webhook_id\") WHERE state = 'pending' AND attempts = 0");
    await q.query("CREATE INDEX \"idx_operations_notifications_webhook\" ON \"operations_notifications\" (\"webhook_id\", \"slot_at\") ");
    await q.query("CREATE INDEX \"idx_operations_notifications_due\" ON \"operations_notifications\" (\"state\", \"next_attempt_at\") ");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP INDEX \"idx_operations_notifications_due\"");
    await q.query("DROP INDEX \"idx_operations_notifications_webhook\"");
    await q.query("DROP INDEX \"uq_operations_notifications_open\"");
    await q.query("DROP TABLE \"operations_notifications\"");
  }
}
