import { MigrationInterface, QueryRunner } from 'typeorm';

export class PortalSessionBudgets1796665370697 implements MigrationInterface {
  name = 'PortalSessionBudgets1796665370697';

  async up(q: QueryRunner): Promise<void> {
    await q.query("ALTER TABLE \"portal_sessions\" ADD \"rate_limit_key\" text");
    await q.query("CREATE INDEX \"idx_portal_sessions_customer\" ON \"portal_sessions\"  (\"customer_id\") ");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP INDEX \"public\".\"idx_portal_sessions_customer\"");
    await q.query("ALTER TABLE \"portal_sessions\" DROP COLUMN \"rate_limit_key\"");
  }
}
