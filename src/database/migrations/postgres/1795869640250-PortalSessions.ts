import { MigrationInterface, QueryRunner } from 'typeorm';

export class PortalSessions1795869640250 implements MigrationInterface {
  name = 'PortalSessions1795869640250';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"portal_sessions\" (\"id\" character varying(40) NOT NULL, \"token_hash\" character varying(64) NOT NULL, \"customer_id\" character varying(40) NOT NULL, \"plan\" character varying(20) NOT NULL, \"webhook_id\" character varying(26), \"created_at\" bigint NOT NULL, \"link_expires_at\" bigint NOT NULL, \"exchanged_at\" bigint, \"session_hash\" character varying(64), \"session_expires_at\" bigint, CONSTRAINT \"PK_379dfbd23aa9d6e2503df20cb3d\" PRIMARY KEY (\"id\"))");
    await q.query("CREATE UNIQUE INDEX \"uq_portal_sessions_token\" ON \"portal_sessions\"  (\"token_hash\") ");
    await q.query("CREATE UNIQUE INDEX \"uq_portal_sessions_session\" ON \"portal_sessions\"  (\"session_hash\") ");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP INDEX \"public\".\"uq_portal_sessions_session\"");
    await q.query("DROP INDEX \"public\".\"uq_portal_sessions_token\"");
    await q.query("DROP TABLE \"portal_sessions\"");
  }
}
