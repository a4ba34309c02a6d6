import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InjectTrendhooksDataSource } from '../database/data-source.token';
import { dialectOf, SQL_PARAMETER } from '../database/dialect';
import { SecretBox } from '../crypto/secret-box';
import { StoredSecrets, StoredSecretValue } from '../crypto/stored-secrets';
import { webhookSecretPlace, type WebhookSecretColumn } from './endpoint.entity';

const COLUMNS: readonly WebhookSecretColumn[] = ['secret', 'previous_secret'];

/**
 * The endpoints' signing secrets (`webhooks.secret`, `webhooks.previous_secret`), shown to the key
 * ring's startup check by the table's owner: SecretBox samples them through this, never in SQL of
 * its own. Registers itself with SecretBox when DeliveryModule is built.
 */
@Injectable()
export class EndpointSecrets extends StoredSecrets {
  /** The row part of webhookSecretPlace: what each ciphertext is bound to. */
  readonly kind = webhookSecretPlace('', 'secret').row.replace(/:$/, '');
  readonly columns = COLUMNS;

  constructor(
    @InjectTrendhooksDataSource() private readonly ds: DataSource,
    secrets: SecretBox,
  ) {
    super();
    secrets.holdSecretsIn(this);
  }

  /** The table is the core feature's: always there once migrated. */
  async present(): Promise<boolean> {
    return true;
  }

  async sample(column: string, like: string, notLike: readonly string[], limit: number): Promise<StoredSecretValue[]> {
    const col = secretColumn(column);
    const where = [`${col} LIKE ${this.param(0)} ESCAPE '\\'`, ...notLike.map((_, i) => `${col} NOT LIKE ${this.param(i + 1)} ESCAPE '\\'`)].join(' AND ');
    const lim = Math.max(0, Math.floor(limit));
    return this.ds.query(`SELECT id AS id, ${col} AS stored FROM webhooks WHERE ${where} LIMIT ${lim}`, [like, ...notLike]);
  }

  /** The current secrets only: a previous one in clear stops signing within a day of its rotation. */
  async countCurrentNotLike(like: string): Promise<number> {
    const rows: { n: string | number }[] = await this.ds.query(`SELECT COUNT(*) AS n FROM webhooks WHERE secret NOT LIKE ${this.param(0)} ESCAPE '\\'`, [like]);
    return Number(rows[0]?.n ?? 0);
  }

  private param(i: number): string {
    return SQL_PARAMETER[dialectOf(this.ds)](i);
  }
}

/** `column` when it is one of the secret columns: it is written into the statement. */
function secretColumn(column: string): WebhookSecretColumn {
  const found = COLUMNS.find((c) => c === column);
  if (!found) throw new Error(`webhooks has no secret column "${column}"`);
  return found;
}
