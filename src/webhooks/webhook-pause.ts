import { Inject, Injectable } from '@nestjs/common';
import { TrendhooksPrincipal } from '../auth/principal';
import { CLOCK, Clock } from '../common/clock';
import { AppError } from '../common/errors';
import { HOLD_EXPIRED, HOLD_MAX_MS } from '../delivery/lifecycle/webhook-lifecycle';
import { DeliveryQueue } from '../delivery/queue/delivery-queue';
import type { ResumedResource } from './dto/webhook.resource';
import { RECOVER_MAX_WINDOW_MS } from './recover-window';
import { RecoverService } from './recover.service';
import type { Webhook } from './webhook.store';

/**
 * How far before an automatic disable the recover offer looks: a delivery keeps retrying for
 * about 33 hours at most on the default schedule, so what the disable cancelled was created
 * within this.
 */
export const CANCELLED_LOOKBACK_MS = 2 * 86_400_000;

/**
 * What pausing and resuming do to a webhook's deliveries. A pause by hand holds the pending ones;
 * resuming releases them (within HOLD_MAX_MS) and offers a recover, counted by a dry run, of what
 * the webhook missed: the events of the pause, and after an automatic disable (`gone`, `failing`)
 * also the deliveries it cancelled.
 */
@Injectable()
export class WebhookPause {
  constructor(
    private readonly queue: DeliveryQueue,
    private readonly recovery: RecoverService,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** After a PATCH `disabled: true`: held when the webhook is paused by hand (an automatic disable keeps its reason, and has cancelled already). */
  async paused(w: Webhook): Promise<void> {
    if (w.disabledAt && w.disabledReason === 'manual') await this.queue.holdPendingForWebhook(w.id, this.clock.now());
  }

  /** After a PATCH `disabled: false` of `before`, which was disabled. */
  async resumed(caller: TrendhooksPrincipal, before: Webhook): Promise<ResumedResource> {
    const now = this.clock.now();
    const { released, expired } = await this.queue.releaseHeldForWebhook(before.id, now, new Date(now.getTime() - HOLD_MAX_MS), HOLD_EXPIRED);
    return { released, expired, recover: await this.recoverOffer(caller, before, now) };
  }

  /**
   * The range to recover and the dry run's count, or null when the range is empty. The dry run is
   * charged to the customer's recover budget like any other: refused, the count is null and the
   * range is still offered.
   */
  private async recoverOffer(caller: TrendhooksPrincipal, w: Webhook, now: Date): Promise<ResumedResource['recover']> {
    const disabledAt = w.disabledAt!.getTime();
    const from = w.disabledReason === 'manual' ? disabledAt : disabledAt - CANCELLED_LOOKBACK_MS;
    const since = Math.max(from, w.createdAt.getTime(), now.getTime() - RECOVER_MAX_WINDOW_MS);
    if (since >= now.getTime()) return null;
    const range = { since: new Date(since).toISOString(), until: now.toISOString() };
    try {
      const dry = await this.recovery.recover(caller, w.id, { ...range, dry_run: true });
      return { ...range, queued: dry.queued, next_since: dry.next_since };
    } catch (err) {
      if (err instanceof AppError && err.code === 'RATE_LIMITED') return { ...range, queued: null, next_since: null };
      throw err;
    }
  }
}
