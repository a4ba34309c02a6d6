import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { pgPool } from '../database/data-source';
import { WebhookDeliveryStatus, WebhookOutcome } from './webhook-delivery-status';

/**
 * Each webhook's latest outcome of the batch, one statement over four arrays. Webhook rows are
 * locked in id order, so two workers' batches cannot deadlock on them. Committed without waiting
 * for the WAL flush, like the outcomes it follows: a crash loses at most a display field.
 */
const RECORD_LATEST = {
  name: 'trendhooks_webhook_status',
  text: `WITH async_commit AS (SELECT set_config('synchronous_commit', 'off', true)),
    src AS (SELECT s.* FROM async_commit, unnest($1::varchar[], $2::bigint[], $3::varchar[], $4::int[]) AS s(webhook_id, at, status, code)),
    latest AS (SELECT DISTINCT ON (webhook_id) webhook_id, at, status, code FROM src ORDER BY webhook_id, at DESC),
    locked AS (SELECT w.id FROM webhooks w WHERE w.id IN (SELECT webhook_id FROM latest) ORDER BY w.id FOR UPDATE)
  UPDATE webhooks w SET last_delivery_at = l.at, last_status = l.status, last_response_code = l.code
  FROM latest l JOIN locked k ON k.id = l.webhook_id
  WHERE w.id = l.webhook_id AND (w.last_delivery_at IS NULL OR w.last_delivery_at <= l.at)`,
};

/** PostgreSQL: one round trip per batch, never one per delivery. */
@Injectable()
export class PostgresWebhookDeliveryStatus extends WebhookDeliveryStatus {
  constructor(@InjectDataSource() private readonly ds: DataSource) {
    super();
  }

  async recordLatest(outcomes: WebhookOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    const values = [outcomes.map((o) => o.webhookId), outcomes.map((o) => o.at.getTime()), outcomes.map((o) => o.status), outcomes.map((o) => o.responseCode)];
    for (let tries = 1; ; tries++) {
      try {
        await pgPool(this.ds).query({ ...RECORD_LATEST, values });
        return;
      } catch (err) {
        // A deadlock with another write of these rows: the statement rolled back as a whole, so it is safe to run again.
        if ((err as { code?: string }).code !== '40P01' || tries >= 3) throw err;
      }
    }
  }
}
