import { MigrationInterface, QueryRunner } from 'typeorm';

export class DestinationCircuits1795835720133 implements MigrationInterface {
  name = 'DestinationCircuits1795835720133';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"destination_circuits\" (\"customer_id\" varchar(40) NOT NULL, \"destination\" varchar(2048) NOT NULL, \"state\" varchar(16) NOT NULL, \"consecutive_failures\" integer NOT NULL DEFAULT (0), \"opened_until\" bigint, \"open_count\" integer NOT NULL DEFAULT (0), \"updated_at\" bigint NOT NULL, PRIMARY KEY (\"customer_id\", \"destination\"))");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP TABLE \"destination_circuits\"");
  }
}
