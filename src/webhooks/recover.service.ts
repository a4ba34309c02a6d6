import { Inject, Injectable } from '@nestjs/common';
import { TrendhooksPrincipal } from '../auth/principal';
import { PlanService } from '../auth/plan.service';
import { RateLimitService } from '../auth/rate-limit.service';
import { CLOCK, Clock } from '../common/clock';
import { AppError } from '../common/errors';
import { isEventKind } from '../events/catalogue';
import { DeliveryQueue } from '../delivery/queue/delivery-queue';
import { QueueWaker } from '../delivery/queue/queue-waker';
import { refuseDisabled, sendsPerMinute } from './deliveries.service';
import type { RecoveryResource } from './dto/recover.dto';
import { RecoverBudget } from './recover-budget';
import { parseRecoverWindow, RECOVER_MAX_EVENTS, RecoverInput } from './recover-window';
import { WebhookStore } from './webhook.store';
import { parseWebhookId } from './webhook-id';

/**
 * Catch-up after an outage (`POST /v1/webhooks/{id}/recover`): the webhook's own subscription
 * (this module owns it) handed to the delivery queue, which owns deliveries and events.
 */
@Injectable()
export class RecoverService {
  constructor(
    private readonly webhooks: WebhookStore,
    private readonly queue: DeliveryQueue,
    private readonly waker: QueueWaker,
    private readonly plans: PlanService,
    private readonly limits: RateLimitService,
    private readonly budget: RecoverBudget,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async recover(caller: TrendhooksPrincipal, rawWebhookId: string, input: RecoverInput): Promise<RecoveryResource> {
    const w = await this.webhooks.findForCustomer(caller.tenantId, parseWebhookId(rawWebhookId));
    if (!w) throw new AppError('NOT_FOUND', `webhook ${rawWebhookId} not found`);
    const now = this.clock.now();
    const { since, until, dryRun } = parseRecoverWindow(input, now);
    // A real recover sends: refused while the webhook is disabled (a dry run still counts what
    // resuming and recovering would send), and it counts as one of the customer's test events and
    // manual retries. Either is charged to the customer's budget of recover work first.
    if (!dryRun) refuseDisabled(w);
    const res = await this.budget.run(caller, async () => {
      if (!dryRun) {
        const state = await this.limits.consume(`sends:tenant:${caller.tenantId}`, sendsPerMinute(this.plans.limits(caller.plan).requestsPerMinute));
        if (!state.allowed) {
          throw new AppError('RATE_LIMITED', `at most ${state.limit} test events, manual retries and recovers per minute; retry in ${state.resetSeconds} s`, { 'Retry-After': String(state.resetSeconds) });
        }
      }
      if (!isEventKind(w.event)) return { queued: 0, nextSince: null };
      return this.queue.recover(
        { webhookId: w.id, customerId: w.customerId, type: w.event, subreddit: w.subreddit, subscribedAt: w.createdAt, since, until },
        now,
        { dryRun, maxEvents: RECOVER_MAX_EVENTS },
      );
    });
    if (!dryRun && res.queued > 0) this.waker.wake();
    return {
      queued: res.queued,
      since: since.toISOString(),
      until: until.toISOString(),
      dry_run: dryRun,
      next_since: res.nextSince ? res.nextSince.toISOString() : null,
    };
  }
}
