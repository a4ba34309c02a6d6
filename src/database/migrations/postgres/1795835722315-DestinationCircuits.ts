import { MigrationInterface, QueryRunner } from 'typeorm';

export class DestinationCircuits1795835722315 implements MigrationInterface {
  name = 'DestinationCircuits1795835722315';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"destination_circuits\" (\"customer_id\" character varying(40) NOT NULL, \"destination\" character varying(2048) NOT NULL, \"state\" character varying(16) NOT NULL, \"consecutive_failures\" integer NOT NULL DEFAULT '0', \"opened_until\" bigint, \"open_count\" integer NOT NULL DEFAULT '0', \"updated_at\" bigint NOT NULL, CONSTRAINT \"PK_1dcb326560f80c8b62176a05edc\" PRIMARY KEY (\"customer_id\", \"destination\"))");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP TABLE \"destination_circuits\"");
  }
}
