import { Injectable } from '@nestjs/common';
import { InjectTrendhooksDataSource } from '../../database/data-source.token';
import { DataSource } from 'typeorm';
import { pgPool } from '../../database/data-source';
import { WebhookDeliveryStatus, WebhookOutcome } from './webhook-delivery-status';

/**
 * The write of each webhook's latest outcome, as CTEs over `from` (a CTE with columns webhook_id,
 * at, status, code). The delivery queue joins them into its outcome statement, so last_* commits
 * with the outcomes (a reader never sees a delivered delivery beside a stale webhook) at no extra
 * round trip; this module still holds the only text that writes these columns. Webhook rows are
 * locked in id order, so two workers' batches cannot deadlock on them.
 */
export function latestOutcomeCtes(from: string): string {
  return `latest AS (
      SELECT DISTINCT ON (o.webhook_id) o.webhook_id, o.at, o.status, o.code FROM ${from} o ORDER BY o.webhook_id, o.at DESC),
    locked AS (SELECT w.id FROM webhooks w WHERE w.id IN (SELECT webhook_id FROM latest) ORDER BY w.id FOR UPDATE),
    touched AS (
      UPDATE webhooks w SET last_delivery_at = l.at, last_status = l.status, last_response_code = l.code
      FROM latest l JOIN locked k ON k.id = l.webhook_id
      WHERE w.id = l.webhook_id AND (w.last_delivery_at IS NULL OR w.last_delivery_at <= l.at))`;
}

const RECORD_LATEST = {
  name: 'trendhooks_webhook_status',
  text: `WITH src AS (SELECT * FROM unnest($1::varchar[], $2::bigint[], $3::varchar[], $4::int[]) AS s(webhook_id, at, status, code)),
    ${latestOutcomeCtes('src')}
  SELECT 1`,
};

/** PostgreSQL: one statement per batch, never one per delivery. */
@Injectable()
export class PostgresWebhookDeliveryStatus extends WebhookDeliveryStatus {
  constructor(@InjectTrendhooksDataSource() private readonly ds: DataSource) {
    super();
  }

  async recordLatest(outcomes: WebhookOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    const values = [outcomes.map((o) => o.webhookId), outcomes.map((o) => o.at.getTime()), outcomes.map((o) => o.status), outcomes.map((o) => o.responseCode)];
    await pgPool(this.ds).query({ ...RECORD_LATEST, values });
  }
}
