import { MigrationInterface, QueryRunner } from 'typeorm';

export class PortalSessions1795869639619 implements MigrationInterface {
  name = 'PortalSessions1795869639619';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"portal_sessions\" (\"id\" varchar(40) PRIMARY KEY NOT NULL, \"token_hash\" varchar(64) NOT NULL, \"customer_id\" varchar(40) NOT NULL, \"plan\" varchar(20) NOT NULL, \"webhook_id\" varchar(26), \"created_at\" bigint NOT NULL, \"link_expires_at\" bigint NOT NULL, \"exchanged_at\" bigint, \"session_hash\" varchar(64), \"session_expires_at\" bigint)");
    await q.query("CREATE UNIQUE INDEX \"uq_portal_sessions_token\" ON \"portal_sessions\" (\"token_hash\") ");
    await q.query("CREATE UNIQUE INDEX \"uq_portal_sessions_session\" ON \"portal_sessions\" (\"session_hash\") ");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP INDEX \"uq_portal_sessions_session\"");
    await q.query("DROP INDEX \"uq_portal_sessions_token\"");
    await q.query("DROP TABLE \"portal_sessions\"");
  }
}
