import { Injectable } from '@nestjs/common';
import { WebhookEntity } from './webhook.entity';
import { TypeOrmWebhookStore } from './webhook.store.typeorm';

@Injectable()
export class SqliteWebhookStore extends TypeOrmWebhookStore {
  /** SQLite runs one writer at a time, and the check and the insert are a single statement. */
  async insertWithinQuota(row: WebhookEntity, max: number): Promise<boolean> {
    const { cols, values } = this.quotaInsert(row);
    const params = values.map(() => '?').join(', ');
    const sqliteValues = values.map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v));
    const res: unknown[] = await this.ds.query(
      `INSERT INTO webhooks (${cols.join(', ')}) SELECT ${params} WHERE (SELECT COUNT(*) FROM webhooks WHERE customer_id = ?) < ? RETURNING id`,
      [...sqliteValues, row.customerId, max],
    );
    return res.length === 1;
  }
}
