import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { CLOCK, Clock } from '../../common/clock';
import { isoString } from '../../common/iso-time';
import { Metrics } from '../../metrics/metrics.service';
import { DELIVERY_OPTIONS, DeliveryModuleOptions } from '../delivery.options';
import { GroupBatcher } from '../group-batcher';
import { DeliveryQueue } from '../queue/delivery-queue';
import { DisabledWebhook, WebhookDeliveryStatus, WebhookFailure } from '../status/webhook-delivery-status';
import { DEFAULT_DISABLE_AFTER_MS } from './disable-rule';
import { OperationsNotifications } from './operations-notifications';
import type { WebhookDisabledEvent } from '../../events/webhook-disabled';

/** `last_error` of a delivery cancelled because its webhook is disabled. */
export const WEBHOOK_DISABLED = 'webhook_disabled';

/**
 * How long a paused webhook holds a delivery: resuming sends again those created within this
 * (the widest range one recover covers, 14 days), and cancels older ones with HOLD_EXPIRED.
 */
export const HOLD_MAX_MS = 14 * 86_400_000;
/** `last_error` of a held delivery older than HOLD_MAX_MS when its webhook was resumed. */
export const HOLD_EXPIRED = 'hold_expired';

/**
 * The worker's side of the failure lifecycle: counts failed attempts against the auto-disable
 * rule (lifecycle/disable-rule.ts), and for each webhook it disables cancels the pending
 * deliveries, logs one `warn` line, counts the metric, stores the operators' `webhook.disabled`
 * notification (OperationsNotifications, when configured) and calls the host's `onWebhookDisabled`.
 */
@Injectable()
export class WebhookLifecycle {
  private readonly logger = new Logger('WebhookLifecycle');
  private readonly afterMs: number | null;
  /** Failures of attempts that end together are counted together: one transaction for the batch. */
  private readonly failures = new GroupBatcher<WebhookFailure, void>(async (items) => {
    await this.count(items);
    return items.map(() => undefined);
  });

  constructor(
    private readonly status: WebhookDeliveryStatus,
    private readonly queue: DeliveryQueue,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(DELIVERY_OPTIONS) private readonly options: DeliveryModuleOptions,
    private readonly operations: OperationsNotifications,
    @Optional() private readonly metrics?: Metrics,
  ) {
    this.afterMs = options.disableAfterMs === undefined ? DEFAULT_DISABLE_AFTER_MS : options.disableAfterMs || null;
  }

  /**
   * A failed attempt whose outcome was recorded (only those that count against the receiver:
   * see countsAsFailure). Settles once it was counted and what it disabled was handled; never rejects.
   */
  failed(failure: WebhookFailure): Promise<void> {
    // The outcome is recorded already: a count that fails (the database, for now) is logged, and the next failure counts again.
    return this.failures.push(failure).catch((err) => this.logger.error({ msg: 'counting a failed attempt failed', webhook_id: failure.webhookId, error: (err as Error).message }));
  }

  private async count(items: WebhookFailure[]): Promise<void> {
    const now = this.clock.now();
    const disabled = await this.status.recordFailures(items, this.afterMs, now);
    for (const w of disabled) await this.disabled(w, now);
  }

  private async disabled(w: DisabledWebhook, now: Date): Promise<void> {
    const cancelled = await this.queue.cancelPendingForWebhook(w.id, now, WEBHOOK_DISABLED);
    this.logger.warn({ msg: 'webhook disabled', webhook_id: w.id, customer_id: w.customerId, reason: w.reason, cancelled_deliveries: cancelled });
    this.metrics?.webhookDisabled(w.reason);
    const event: WebhookDisabledEvent = { id: w.id, customer_id: w.customerId, url: w.url, reason: w.reason, disabled_at: isoString(w.disabledAt) };
    // Stored before this returns (a restart loses none); sent by a worker's OperationsNotifications.
    await this.operations.raise(event).catch((err) => this.logger.error({ msg: 'storing the operations notification failed', webhook_id: w.id, error: (err as Error).message }));
    const hook = this.options.onWebhookDisabled;
    if (!hook) return;
    // Not awaited: a slow hook (the operators' POST and its retries) holds no attempt's slot.
    void Promise.resolve()
      .then(() => hook(event))
      .catch((err) => this.logger.error({ msg: 'onWebhookDisabled failed', webhook_id: w.id, error: (err as Error).message }));
  }
}
