import { MigrationInterface, QueryRunner } from 'typeorm';

export class PortalSessionBudgets1796665365908 implements MigrationInterface {
  name = 'PortalSessionBudgets1796665365908';

  async up(q: QueryRunner): Promise<void> {
    await q.query("DROP INDEX \"uq_portal_sessions_session\"");
    await q.query("DROP INDEX \"uq_portal_sessions_token\"");
    await q.query("CREATE TABLE \"temporary_portal_sessions\" (\"id\" varchar(40) PRIMARY KEY NOT NULL, \"token_hash\" varchar(64) NOT NULL, \"customer_id\" varchar(40) NOT NULL, \"plan\" varchar(20) NOT NULL, \"webhook_id\" varchar(26), \"created_at\" bigint NOT NULL, \"link_expires_at\" bigint NOT NULL, \"exchanged_at\" bigint, \"session_hash\" varchar(64), \"session_expires_at\" bigint, \"rate_limit_key\" text)");
    await q.query("INSERT INTO \"temporary_portal_sessions\"(\"id\", \"token_hash\", \"customer_id\", \"plan\", \"webhook_id\", \"created_at\", \"link_expires_at\", \"exchanged_at\", \"session_hash\", \"session_expires_at\") SELECT \"id\", \"token_hash\", \"customer_id\", \"plan\", \"webhook_id\", \"created_at\", \"link_expires_at\", \"exchanged_at\", \"session_hash\", \"session_expires_at\" FROM \"portal_sessions\"");
    await q.query("DROP TABLE \"portal_sessions\"");
    await q.query("ALTER TABLE \"temporary_portal_sessions\" RENAME TO \"portal_sessions\"");
    await q.query("CREATE UNIQUE INDEX \"uq_portal_sessions_session\" ON \"portal_sessions\" (\"session_hash\") ");
    await q.query("CREATE UNIQUE INDEX \"uq_portal_sessions_token\" ON \"portal_sessions\" (\"token_hash\") ");
    await q.query("CREATE INDEX \"idx_portal_sessions_customer\" ON \"portal_sessions\" (\"customer_id\") ");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP INDEX \"idx_portal_sessions_customer\"");
    await q.query("DROP INDEX \"uq_portal_sessions_token\"");
    await q.query("DROP INDEX \"uq_portal_sessions_session\"");
    await q.query("ALTER TABLE \"portal_sessions\" RENAME TO \"temporary_portal_sessions\"");
    await q.query("CREATE TABLE \"portal_sessions\" (\"id\" varchar(40) PRIMARY KEY NOT NULL, \"token_hash\" varchar(64) NOT NULL, \"customer_id\" varchar(40) NOT NULL, \"plan\" varchar(20) NOT NULL, \"webhook_id\" varchar(26), \"created_at\" bigint NOT NULL, \"link_expires_at\" bigint NOT NULL, \"exchanged_at\" bigint, \"session_hash\" varchar(64), \"session_expires_at\" bigint)");
    await q.query("INSERT INTO \"portal_sessions\"(\"id\", \"token_hash\", \"customer_id\", \"plan\", \"webhook_id\", \"created_at\", \"link_expires_at\", \"exchanged_at\", \"session_hash\", \"session_expires_at\") SELECT \"id\", \"token_hash\", \"customer_id\", \"plan\", \"webhook_id\", \"created_at\", \"link_expires_at\", \"exchanged_at\", \"session_hash\", \"session_expires_at\" FROM \"temporary_portal_sessions\"");
    await q.query("DROP TABLE \"temporary_portal_sessions\"");
    await q.query("CREATE UNIQUE INDEX \"uq_portal_sessions_token\" ON \"portal_sessions\" (\"token_hash\") ");
    await q.query("CREATE UNIQUE INDEX \"uq_portal_sessions_session\" ON \"portal_sessions\" (\"session_hash\") ");
  }
}
