import type { FailedAttempt, FailureClock } from '../lifecycle/disable-rule';
import type { WebhookFailure } from './webhook-delivery-status';

/** A webhook's failure clock as either database answers it (PostgreSQL: BIGINT as a string). */
export interface ClockRow {
  id: string;
  customer_id: string;
  url: string;
  failing_since: number | string | null;
  failure_periods: number | string;
  last_failure_period: number | string | null;
}

export function clockOf(r: ClockRow): FailureClock & { id: string; customerId: string; url: string } {
  return {
    id: r.id,
    customerId: r.customer_id,
    url: r.url,
    failingSince: r.failing_since === null ? null : Number(r.failing_since),
    failurePeriods: Number(r.failure_periods),
    lastFailurePeriod: r.last_failure_period === null ? null : Number(r.last_failure_period),
  };
}

export function failedAttempt(f: WebhookFailure): { webhookId: string } & FailedAttempt {
  return { webhookId: f.webhookId, at: f.at.getTime(), gone: f.gone };
}
