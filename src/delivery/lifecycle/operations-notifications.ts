import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { CLOCK, Clock } from '../../common/clock';
import { WebhookDisabledEvent } from '../../events/webhook-disabled';
import { DELIVERY_OPTIONS, DeliveryModuleOptions } from '../delivery.options';
import { DEFAULT_RETRY_SCHEDULE_S, RetryPolicy } from '../retry-policy';
import { OperationsNotificationEntity } from './operations-notification.entity';
import { OperationsNotificationStore } from './operations-notification.store';
import { OperationsNotifier } from './operations-notifier';
import { notificationBody } from './operations-fold';

/** At most one notification per webhook in this long; the disables in between are folded into the next. */
export const DEFAULT_OPERATIONS_INTERVAL_MS = 3_600_000;
/** How often a worker looks for due notifications besides its own wake-ups: slow, the table is usually empty. */
export const DEFAULT_OPERATIONS_POLL_MS = 5_000;
/** Sent notifications are kept this long (the operators' trail), then deleted. */
export const DEFAULT_OPERATIONS_RETENTION_MS = 7 * 86_400_000;
/** Pruning runs at most this often. */
const PRUNE_EVERY_MS = 3_600_000;

/** Notifications sent at once per pass: the operators' receiver is one destination. */
const CLAIM_LIMIT = 8;

/**
 * The operators' `webhook.disabled` notifications (OPERATIONS_WEBHOOK_URL): each disable is stored
 * (OperationsNotificationStore) before anyone is told, so a restart loses none, and memory holds
 * only the attempts in flight. A worker process sends what is due, retried on the deliveries'
 * schedule under the same `webhook-id`; a process that dies mid-send leaves a lease that expires.
 * Off (`raise` does nothing, no timer) unless DeliveryModule was given `operations`.
 */
@Injectable()
export class OperationsNotifications implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('OperationsNotifications');
  private readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly notifier?: OperationsNotifier;
  private readonly policy: RetryPolicy;
  private readonly intervalMs: number;
  private readonly retentionMs: number;
  private readonly leaseMs: number;
  private timer?: NodeJS.Timeout;
  /** One wake-up at the earliest retry this process scheduled, so a scaled-down schedule is kept without polling faster. */
  private soon?: { at: number; timer: NodeJS.Timeout };
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private prunedAt = 0;

  constructor(
    private readonly store: OperationsNotificationStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(DELIVERY_OPTIONS) private readonly options: DeliveryModuleOptions,
  ) {
    const ops = options.operations;
    if (ops) this.notifier = new OperationsNotifier({ url: ops.url, secret: ops.secret, ca: ops.ca ?? undefined, timeoutMs: options.timeoutMs, clock });
    this.policy = new RetryPolicy({ scheduleSeconds: options.retryScheduleSeconds ?? DEFAULT_RETRY_SCHEDULE_S, random: options.random });
    this.intervalMs = ops?.intervalMs ?? DEFAULT_OPERATIONS_INTERVAL_MS;
    this.retentionMs = ops?.retentionMs ?? DEFAULT_OPERATIONS_RETENTION_MS;
    // An attempt is bounded by the timeout; the lease outlasts it, so a live sender never loses its row.
    this.leaseMs = (options.timeoutMs ?? 10_000) + 5_000;
  }

  get enabled(): boolean {
    return this.notifier !== undefined;
  }

  /** Stores the disable as a notification of its own or folded into the webhook's next one; a sender picks it up. */
  async raise(event: WebhookDisabledEvent): Promise<void> {
    if (!this.notifier) return;
    const outcome = await this.store.raise(event, this.clock.now(), this.intervalMs);
    if (outcome === 'queued') this.wake();
  }

  onApplicationBootstrap(): void {
    if (!this.notifier || this.options.worker === false) return;
    this.timer = setInterval(() => this.wake(), this.options.operations?.pollMs ?? DEFAULT_OPERATIONS_POLL_MS);
    this.timer.unref();
    this.wake();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.soon?.timer);
    await this.running;
    await this.notifier?.close();
  }

  /** Sends what is due now; one pass at a time, another right after when woken during one. */
  private wake(): void {
    if (this.stopped || !this.timer) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .catch((err) => this.logger.error({ msg: 'sending operations notifications failed', error: (err as Error).message }))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Wakes in `ms` unless an earlier wake-up is set (the slow timer covers the rest, in any process). */
  private wakeIn(ms: number): void {
    const at = Date.now() + ms;
    if (this.stopped || (this.soon && this.soon.at <= at)) return;
    clearTimeout(this.soon?.timer);
    const timer = setTimeout(() => {
      this.soon = undefined;
      this.wake();
    }, ms);
    timer.unref();
    this.soon = { at, timer };
  }

  private async pass(): Promise<void> {
    const now = this.clock.now();
    const rows = await this.store.claimDue(this.owner, now, new Date(now.getTime() + this.leaseMs), CLAIM_LIMIT);
    await Promise.all(rows.map((r) => this.attempt(r)));
    if (rows.length === CLAIM_LIMIT) this.again = true;
    if (now.getTime() - this.prunedAt >= PRUNE_EVERY_MS) {
      this.prunedAt = now.getTime();
      // Never within the interval: the latest sent row is where a webhook's next slot starts.
      await this.store.pruneSent(new Date(now.getTime() - Math.max(this.retentionMs, this.intervalMs)));
    }
  }

  private async attempt(row: OperationsNotificationEntity): Promise<void> {
    // Claimed again after its last attempt (each claim counts one): its senders died mid-send, so it ends here.
    if (row.attempts > 1 && this.policy.nextDelayMs(row.attempts - 1, null) === null) {
      return this.store.markFailed(row.id, this.owner, this.clock.now(), 'sender_lost: the last attempt never finished', null);
    }
    const error = await this.notifier!.send(row.id, notificationBody(row));
    const now = this.clock.now();
    if (error === null) return this.store.markSent(row.id, this.owner, now);
    const delay = this.policy.nextDelayMs(row.attempts, null);
    this.logger.warn({ msg: 'operations notification failed', webhook_id: row.webhookId, attempt: row.attempts, error, retry: delay !== null });
    await this.store.markFailed(row.id, this.owner, now, error, delay === null ? null : new Date(now.getTime() + delay));
    if (delay !== null) this.wakeIn(delay);
  }
}
