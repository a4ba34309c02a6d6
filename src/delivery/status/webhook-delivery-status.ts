import type { DisabledReason } from '../endpoint.entity';
import { UNCOUNTED_ERROR_CLASSES } from '../lifecycle/disable-rule';

/** A delivery attempt's outcome as its webhook shows it (`last_*`). */
export interface WebhookOutcome {
  webhookId: string;
  /** When the attempt started (`last_delivery_at`). */
  at: Date;
  status: 'delivered' | 'retrying' | 'failed';
  responseCode: number | null;
  /** The failure's class: some say nothing about the receiver and leave the failure clock alone (UNCOUNTED_ERROR_CLASSES). */
  errorClass?: string | null;
}

/** A counted failed attempt, for the auto-disable rule (lifecycle/disable-rule.ts). */
export interface WebhookFailure {
  webhookId: string;
  /** When the attempt started. */
  at: Date;
  /** The receiver answered 410 Gone: disabled at once. */
  gone: boolean;
}

/** A webhook this process just disabled, with what its notification carries. */
export interface DisabledWebhook {
  id: string;
  customerId: string;
  url: string;
  reason: Exclude<DisabledReason, 'manual'>;
  disabledAt: Date;
}

/**
 * What an outcome does to the failure clock, in SQL over an outcome's status and error class
 * (the same text on both databases): `success` stops it, `failure` starts it when it is not
 * running, `none` leaves it alone.
 */
export function clockOfSql(status: string, errorClass: string): string {
  const uncounted = UNCOUNTED_ERROR_CLASSES.map((c) => `'${c}'`).join(', ');
  return `CASE WHEN ${status} = 'delivered' THEN 'success' WHEN ${errorClass} IN (${uncounted}) THEN 'none' ELSE 'failure' END`;
}

/** The failure-clock columns of the status write, SQL over `w` (the webhook row as it was) and `clock` (clockOfSql). */
export function failureClockSets(clock: string, at: string): string {
  return `failing_since = CASE ${clock} WHEN 'success' THEN NULL WHEN 'failure' THEN COALESCE(w.failing_since, ${at}) ELSE w.failing_since END,
        failure_periods = CASE WHEN ${clock} = 'success' THEN 0 ELSE w.failure_periods END,
        last_failure_period = CASE WHEN ${clock} = 'success' THEN NULL ELSE w.last_failure_period END`;
}

/**
 * The one writer of a webhook's last_delivery_at, last_status and last_response_code, and of its
 * failure clock and automatic disabling: delivery reports outcomes here instead of writing the
 * webhooks table. Latest wins: an attempt that started earlier but finished later (a hang) never
 * hides a newer one.
 */
export abstract class WebhookDeliveryStatus {
  /**
   * Records a batch of outcomes (any order, several per webhook allowed) as one write. On SQLite
   * it has run when it returns (its statements are synchronous), so a caller may call it inside
   * its own synchronous transaction; the promise then carries nothing. A delivered outcome stops
   * the webhook's failure clock, a counted failure starts it when it is not running.
   */
  abstract recordLatest(outcomes: WebhookOutcome[]): Promise<void>;

  /**
   * After their outcomes were recorded: counts these failures against the auto-disable rule
   * (`afterMs`: WEBHOOK_DISABLE_AFTER, null: only 410 disables) and disables the webhooks it trips,
   * at `now`. Answers the webhooks this call disabled: exactly one caller learns of each, however
   * many workers record failures of it at once.
   */
  abstract recordFailures(failures: WebhookFailure[], afterMs: number | null, now: Date): Promise<DisabledWebhook[]>;
}
