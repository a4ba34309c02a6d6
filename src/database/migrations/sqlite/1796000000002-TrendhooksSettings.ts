import { MigrationInterface, QueryRunner } from 'typeorm';

export class TrendhooksSettings1796000000002 implements MigrationInterface {
  name = 'TrendhooksSettings1796000000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"settings\" (\"key\" varchar(100) PRIMARY KEY NOT NULL, \"value\" text NOT NULL)");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP TABLE \"settings\"");
  }
}
