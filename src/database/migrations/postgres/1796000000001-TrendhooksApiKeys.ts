import { MigrationInterface, QueryRunner } from 'typeorm';

export class TrendhooksApiKeys1796000000001 implements MigrationInterface {
  name = 'TrendhooksApiKeys1796000000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"api_keys\" (\"id\" character varying(40) NOT NULL, \"customer_id\" character varying(40) NOT NULL, \"prefix\" character varying(20) NOT NULL, \"key_hash\" character varying(64) NOT NULL, \"created_at\" bigint NOT NULL, \"revoked_at\" bigint, CONSTRAINT \"PK_5c8a79801b44bd27b79228e1dad\" PRIMARY KEY (\"id\"))");
    await q.query("CREATE INDEX \"idx_api_keys_customer\" ON \"api_keys\" (\"customer_id\") ");
    await q.query("CREATE UNIQUE INDEX \"uq_api_keys_hash\" ON \"api_keys\" (\"key_hash\") ");
    await q.query("CREATE TABLE \"customers\" (\"id\" character varying(40) NOT NULL, \"name\" character varying(200) NOT NULL, \"plan\" character varying(20) NOT NULL, \"created_at\" bigint NOT NULL, \"private_allow\" text, CONSTRAINT \"UQ_b942d55b92ededa770041db9ded\" UNIQUE (\"name\"), CONSTRAINT \"PK_133ec679a801fab5e070f73d3ea\" PRIMARY KEY (\"id\"))");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP TABLE \"customers\"");
    await q.query("DROP INDEX \"public\".\"uq_api_keys_hash\"");
    await q.query("DROP INDEX \"public\".\"idx_api_keys_customer\"");
    await q.query("DROP TABLE \"api_keys\"");
  }
}
