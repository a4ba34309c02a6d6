import { MigrationInterface, QueryRunner } from 'typeorm';

export class WebhookLifecycle1795857417582 implements MigrationInterface {
  name = 'WebhookLifecycle1795857417582';

  async up(q: QueryRunner): Promise<void> {
    await q.query("ALTER TABLE \"webhooks\" ADD \"disabled_at\" bigint");
    await q.query("ALTER TABLE \"webhooks\" ADD \"disabled_reason\" character varying(16)");
    await q.query("ALTER TABLE \"webhooks\" ADD \"failing_since\" bigint");
    await q.query("ALTER TABLE \"webhooks\" ADD \"failure_periods\" integer NOT NULL DEFAULT '0'");
    await q.query("ALTER TABLE \"webhooks\" ADD \"last_failure_period\" integer");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("ALTER TABLE \"webhooks\" DROP COLUMN \"last_failure_period\"");
    await q.query("ALTER TABLE \"webhooks\" DROP COLUMN \"failure_periods\"");
    await q.query("ALTER TABLE \"webhooks\" DROP COLUMN \"failing_since\"");
    await q.query("ALTER TABLE \"webhooks\" DROP COLUMN \"disabled_reason\"");
    await q.query("ALTER TABLE \"webhooks\" DROP COLUMN \"disabled_at\"");
  }
}
