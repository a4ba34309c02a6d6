import { MigrationInterface, QueryRunner } from 'typeorm';

export class TrendhooksSettings1796000000002 implements MigrationInterface {
  name = 'TrendhooksSettings1796000000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"settings\" (\"key\" character varying(100) NOT NULL, \"value\" text NOT NULL, CONSTRAINT \"PK_c8639b7626fa94ba8265628f214\" PRIMARY KEY (\"key\"))");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP TABLE \"settings\"");
  }
}
