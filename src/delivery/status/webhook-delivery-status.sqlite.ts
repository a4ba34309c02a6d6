import { Injectable } from '@nestjs/common';
import { InjectTrendhooksDataSource } from '../../database/data-source.token';
import type { Statement } from 'better-sqlite3';
import { DataSource } from 'typeorm';
import { sqliteHandle } from '../../database/data-source';
import { WebhookDeliveryStatus, WebhookOutcome } from './webhook-delivery-status';

const TOUCH = 'UPDATE webhooks SET last_delivery_at = @at, last_status = @status, last_response_code = @code WHERE id = @id AND (last_delivery_at IS NULL OR last_delivery_at <= @at)';

/** SQLite: one guarded UPDATE per outcome, oldest first, synchronously (see recordLatest). */
@Injectable()
export class SqliteWebhookDeliveryStatus extends WebhookDeliveryStatus {
  private touch?: Statement;

  constructor(@InjectTrendhooksDataSource() private readonly ds: DataSource) {
    super();
  }

  recordLatest(outcomes: WebhookOutcome[]): Promise<void> {
    this.touch ??= sqliteHandle(this.ds).prepare(TOUCH);
    // Oldest first (stable), as if written one by one: with equal start times the later outcome wins.
    const order = [...outcomes].sort((a, b) => a.at.getTime() - b.at.getTime());
    for (const o of order) this.touch.run({ at: o.at.getTime(), status: o.status, code: o.responseCode, id: o.webhookId });
    return Promise.resolve();
  }
}
