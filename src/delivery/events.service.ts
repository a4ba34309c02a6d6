import { Inject, Injectable, Optional } from '@nestjs/common';
import { CLOCK, Clock } from '../common/clock';
import { AppError } from '../common/errors';
import { EVENT_KINDS, EventKind, exampleFigures, isEventKind, isTestEventId, TEST_EVENT_ID_PREFIX } from '../events/catalogue';
import { newId } from '../common/ids';
import { Metrics } from '../metrics/metrics.service';
import { SUBREDDIT_INPUT, normaliseSubreddit } from '../common/reddit-names';
import { deliveryId } from './delivery-id';
import { DeliveryQueue } from './queue/delivery-queue';
import { QueueWaker } from './queue/queue-waker';
import { RoutedEvent, SubscriptionSource } from './subscription-source';
import type { ClaimedWork, Subscriber } from './queue/types';
import { DeliveryWorker } from './delivery.worker';

export interface EmitInput {
  /** Deterministic id from the trend pipeline (replays are no-ops); a fresh `evt_` ULID when absent. */
  id?: string;
  type: string;
  subreddit: string;
  data?: Record<string, unknown>;
  createdAt?: Date;
}

export interface EmitResult {
  event_id: string;
  created: boolean;
  deliveries: number;
}

/** Writes events and fans them out to their subscribers in the same transaction (the outbox). */
@Injectable()
export class EventsService {
  constructor(
    private readonly repo: DeliveryQueue,
    private readonly waker: QueueWaker,
    @Inject(CLOCK) private readonly clock: Clock,
    @Optional() private readonly metrics?: Metrics,
    @Optional() private readonly subscriptions?: SubscriptionSource,
    /** This process's worker, when it runs one: it takes new deliveries straight from the emit (see leaseForEmit). */
    @Optional() private readonly worker?: DeliveryWorker,
  ) {}

  /**
   * A trend event: every endpoint the SubscriptionSource answers (the webhook API's subscriptions
   * by default) gets one delivery, unless it is disabled. No source (a unit test): no deliveries.
   */
  emit(input: EmitInput): Promise<EmitResult> {
    if (!isEventKind(input.type)) {
      throw new AppError('VALIDATION_ERROR', `event must be one of ${EVENT_KINDS.join(', ')}`);
    }
    if (input.id !== undefined && isTestEventId(input.id)) {
      throw new AppError('VALIDATION_ERROR', `event ids starting ${TEST_EVENT_ID_PREFIX} are reserved for test events (POST /v1/webhooks/{webhook_id}/test)`);
    }
    const source = this.subscriptions;
    return this.write(input, async (event) => (source ? [...(await source.subscribers({ ...event, type: input.type as EventKind }))] : []));
  }

  /**
   * A test event to one webhook only (POST /v1/webhooks/{id}/test): its own kind and subreddit, the
   * kind's example figures, under a `evt_test_` id, which makes the delivery layer mark it `test: true`.
   */
  emitTest(webhook: Subscriber & { event: EventKind; subreddit: string }): Promise<EmitResult> {
    const id = newId(TEST_EVENT_ID_PREFIX.slice(0, -1), this.clock.now().getTime());
    return this.write({ id, type: webhook.event, subreddit: webhook.subreddit, data: exampleFigures(webhook.event) }, [{ id: webhook.id, customerId: webhook.customerId }]);
  }

  private async write(input: EmitInput, target: Subscriber[] | ((event: Omit<RoutedEvent, 'type'>) => Promise<Subscriber[]>)): Promise<EmitResult> {
    if (typeof input.subreddit !== 'string' || !SUBREDDIT_INPUT.test(input.subreddit)) {
      throw new AppError('VALIDATION_ERROR', 'subreddit must be 3 to 21 letters, digits or underscores');
    }
    if (input.id !== undefined && !/^evt_[A-Za-z0-9_-]{1,60}$/.test(input.id)) throw new AppError('VALIDATION_ERROR', 'event id must look like evt_…');
    const data = input.data ?? {};
    if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new AppError('VALIDATION_ERROR', 'data must be a JSON object');
    const now = this.clock.now();
    const id = input.id ?? newId('evt', now.getTime());
    const subreddit = normaliseSubreddit(input.subreddit);
    const createdAt = input.createdAt ?? now;
    // A replayed id whose fan-out is known complete: nothing to ask the source, nothing to write.
    if (input.id !== undefined && (await this.repo.replayIsComplete(id))) return { event_id: id, created: false, deliveries: 0 };
    // The source answers before any worker slot is leased: its lookup holds no lease.
    const targets = typeof target === 'function' ? await target({ id, subreddit, data, createdAt }) : target;
    const lease = this.worker?.leaseForEmit();
    let claimed: ClaimedWork[] = [];
    let res: { created: boolean; deliveries: number };
    try {
      ({ claimed = [], ...res } = await this.repo.insertEventWithDeliveries(
        { id, type: input.type, subreddit, payload: JSON.stringify(data), createdAt },
        targets,
        (webhookId) => deliveryId(id, webhookId),
        now,
        lease,
      ));
    } finally {
      if (lease) this.worker!.adopt(lease, claimed);
    }
    // Test events are counted apart: they report no trend of their kind.
    if (res.created) this.metrics?.eventEmitted(isTestEventId(id) ? 'test' : input.type);
    // Deliveries this process's worker did not take are pending: wake the workers.
    if (res.deliveries > claimed.length) this.waker.wake();
    return { event_id: id, created: res.created, deliveries: res.deliveries };
  }
}
