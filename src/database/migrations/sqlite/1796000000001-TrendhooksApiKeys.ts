import { MigrationInterface, QueryRunner } from 'typeorm';

export class TrendhooksApiKeys1796000000001 implements MigrationInterface {
  name = 'TrendhooksApiKeys1796000000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"api_keys\" (\"id\" varchar(40) PRIMARY KEY NOT NULL, \"customer_id\" varchar(40) NOT NULL, \"prefix\" varchar(20) NOT NULL, \"key_hash\" varchar(64) NOT NULL, \"created_at\" bigint NOT NULL, \"revoked_at\" bigint)");
    await q.query("CREATE INDEX \"idx_api_keys_customer\" ON \"api_keys\" (\"customer_id\") ");
    await q.query("CREATE UNIQUE INDEX \"uq_api_keys_hash\" ON \"api_keys\" (\"key_hash\") ");
    await q.query("CREATE TABLE \"customers\" (\"id\" varchar(40) PRIMARY KEY NOT NULL, \"name\" varchar(200) NOT NULL, \"plan\" varchar(20) NOT NULL, \"created_at\" bigint NOT NULL, \"private_allow\" text, CONSTRAINT \"UQ_b942d55b92ededa770041db9ded\" UNIQUE (\"name\"))");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP TABLE \"customers\"");
    await q.query("DROP INDEX \"uq_api_keys_hash\"");
    await q.query("DROP INDEX \"idx_api_keys_customer\"");
    await q.query("DROP TABLE \"api_keys\"");
  }
}
