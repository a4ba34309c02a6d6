import { Injectable } from '@nestjs/common';
import { InjectTrendhooksDataSource } from '../../database/data-source.token';
import { DataSource } from 'typeorm';
import { pgPool } from '../../database/data-source';
import { applyFailures } from '../lifecycle/disable-rule';
import { clockOf, ClockRow, failedAttempt } from './clock-row';
import { clockOfSql, DisabledWebhook, failureClockSets, WebhookDeliveryStatus, WebhookFailure, WebhookOutcome } from './webhook-delivery-status';

/**
 * The write of each webhook's latest outcome, as CTEs over `from` (a CTE with columns webhook_id,
 * at, status, code, clock: see clockOfSql); the failure clock moves with it. The delivery queue
 * joins them into its outcome statement, so last_* commits with the outcomes (a reader never
 * sees a delivered delivery beside a stale webhook) at no extra round trip; this module still
 * holds the only text that writes these columns. Webhook rows are locked in id order, so two
 * workers' batches (and recordFailures) cannot deadlock on them.
 */
export function latestOutcomeCtes(from: string): string {
  return `latest AS (
      SELECT DISTINCT ON (o.webhook_id) o.webhook_id, o.at, o.status, o.code, o.clock FROM ${from} o ORDER BY o.webhook_id, o.at DESC),
    locked AS (SELECT w.id FROM webhooks w WHERE w.id IN (SELECT webhook_id FROM latest) ORDER BY w.id FOR UPDATE),
    touched AS (
      UPDATE webhooks w SET last_delivery_at = l.at, last_status = l.status, last_response_code = l.code,
        ${failureClockSets('l.clock', 'l.at')}
      FROM latest l JOIN locked k ON k.id = l.webhook_id
      WHERE w.id = l.webhook_id AND (w.last_delivery_at IS NULL OR w.last_delivery_at <= l.at))`;
}

const RECORD_LATEST = {
  name: 'trendhooks_webhook_status',
  text: `WITH raw AS (SELECT * FROM unnest($1::varchar[], $2::bigint[], $3::varchar[], $4::int[], $5::varchar[]) AS s(webhook_id, at, status, code, error_class)),
    src AS (SELECT webhook_id, at, status, code, ${clockOfSql('status', 'error_class')} AS clock FROM raw),
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
    const values = [outcomes.map((o) => o.webhookId), outcomes.map((o) => o.at.getTime()), outcomes.map((o) => o.status), outcomes.map((o) => o.responseCode), outcomes.map((o) => o.errorClass ?? null)];
    await pgPool(this.ds).query({ ...RECORD_LATEST, values });
  }

  /** The failing webhooks locked in id order (as the status write locks them), decided in code, written back row by row: failures are the rare path. */
  async recordFailures(failures: WebhookFailure[], afterMs: number | null, now: Date): Promise<DisabledWebhook[]> {
    if (failures.length === 0) return [];
    const ids = [...new Set(failures.map((f) => f.webhookId))];
    return this.ds.transaction(async (em) => {
      const rows: ClockRow[] = await em.query(
        'SELECT id, customer_id, url, failing_since, failure_periods, last_failure_period FROM webhooks WHERE id = ANY($1::varchar[]) AND disabled_at IS NULL ORDER BY id FOR UPDATE',
        [ids],
      );
      const out: DisabledWebhook[] = [];
      for (const d of applyFailures(rows.map(clockOf), failures.map(failedAttempt), afterMs)) {
        await em.query(
          'UPDATE webhooks SET failure_periods = $2, last_failure_period = $3, disabled_at = $4, disabled_reason = $5 WHERE id = $1',
          [d.row.id, d.clock.failurePeriods, d.clock.lastFailurePeriod, d.disable ? now.getTime() : null, d.disable],
        );
        if (d.disable) out.push({ id: d.row.id, customerId: d.row.customerId, url: d.row.url, reason: d.disable as DisabledWebhook['reason'], disabledAt: now });
      }
      return out;
    });
  }
}
