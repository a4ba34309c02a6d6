import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Room for encrypted secrets (`enc:v1:<key id>:…`, about 120 characters) and the per-customer
 * private allow-list. Widened in place, not dropped and re-added as the generator wrote it: the
 * rows keep their secrets (plaintext until `trendhooks encryption reencrypt`).
 */
export class SecretsAtRest1795468935449 implements MigrationInterface {
  name = 'SecretsAtRest1795468935449';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "customers" ADD "private_allow" text');
    await q.query('ALTER TABLE "webhooks" ALTER COLUMN "secret" TYPE character varying(255)');
    await q.query('ALTER TABLE "webhooks" ALTER COLUMN "previous_secret" TYPE character varying(255)');
  }

  async down(q: QueryRunner): Promise<void> {
    // Fails (changing nothing) while encrypted values are stored: they do not fit 80 characters.
    await q.query('ALTER TABLE "webhooks" ALTER COLUMN "previous_secret" TYPE character varying(80)');
    await q.query('ALTER TABLE "webhooks" ALTER COLUMN "secret" TYPE character varying(80)');
    await q.query('ALTER TABLE "customers" DROP COLUMN "private_allow"');
  }
}
