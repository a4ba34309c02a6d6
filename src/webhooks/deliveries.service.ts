import { Inject, Injectable } from '@nestjs/common';
import { TrendhooksPrincipal } from '../auth/principal';
import { PlanService } from '../auth/plan.service';
import { RateLimitService } from '../auth/rate-limit.service';
import { CLOCK, Clock } from '../common/clock';
import { Paged } from '../common/envelope';
import { AppError } from '../common/errors';
import { ListQuery, PaginationService } from '../pagination/pagination.service';
import type { EndpointEntity } from '../delivery/endpoint.entity';
import { DeliveryFilterQuery, filterParams, parseDeliveryFilter } from './delivery-filters';
import { Webhook, WebhookStore } from './webhook.store';
import { parseWebhookId } from './webhook-id';
import { DELIVERY_ID_RE, deliveryId } from '../delivery/delivery-id';
import { DeliveryResource, toDeliveryResource } from '../delivery/delivery.resource';
import { EventsService } from '../delivery/events.service';
import { DeliveryQueue } from '../delivery/queue/delivery-queue';
import { QueueWaker } from '../delivery/queue/queue-waker';

export const DELIVERIES_LIST_ROUTE = 'webhooks.deliveries';

/** A disabled webhook sends nothing: a test, a retry or a recover would only be held or cancelled. */
export function refuseDisabled(w: Pick<EndpointEntity, 'id' | 'disabledAt' | 'disabledReason'>): void {
  if (w.disabledAt) {
    throw new AppError('WEBHOOK_DISABLED', `webhook ${w.id} is disabled (${w.disabledReason ?? 'manual'}); resume it with PATCH /v1/webhooks/${w.id} {"disabled": false} first`);
  }
}

/**
 * Test events and manual retries per customer and minute: a quarter of the plan's request limit.
 * Each one is a send to an endpoint the customer chose, so they are limited apart from (and far
 * below) the reads: a customer cannot turn its whole request budget into attempts that hang.
 */
export function sendsPerMinute(requestsPerMinute: number): number {
  return Math.max(1, Math.floor(requestsPerMinute / 4));
}

/** The customer-facing delivery log, manual retry and test events; every call is scoped to the caller's webhook. */
@Injectable()
export class DeliveriesService {
  constructor(
    private readonly deliveries: DeliveryQueue,
    private readonly webhooks: WebhookStore,
    private readonly events: EventsService,
    private readonly waker: QueueWaker,
    private readonly plans: PlanService,
    private readonly limits: RateLimitService,
    private readonly pagination: PaginationService,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  private async ownedWebhook(caller: TrendhooksPrincipal, rawId: string): Promise<Webhook> {
    const w = await this.webhooks.findForCustomer(caller.tenantId, parseWebhookId(rawId));
    if (!w) throw new AppError('NOT_FOUND', `webhook ${rawId} not found`);
    return w;
  }

  /** The log newest first, optionally filtered; a cursor carries its filters and is refused with others (INVALID_CURSOR). */
  async list(caller: TrendhooksPrincipal, rawWebhookId: string, query: ListQuery & DeliveryFilterQuery): Promise<Paged<DeliveryResource>> {
    const w = await this.ownedWebhook(caller, rawWebhookId);
    const filter = parseDeliveryFilter(query);
    const ctx = await this.pagination.begin(query, {
      route: DELIVERIES_LIST_ROUTE,
      customerId: caller.tenantId,
      params: { webhook_id: w.id, ...filterParams(filter) },
      planMaxPageSize: this.plans.limits(caller.plan).maxPageSize,
    });
    const rows = await this.deliveries.pageForWebhook(w.id, ctx.request, filter);
    const page = ctx.withPrev(rows, (d) => [d.createdAt.getTime(), d.id]);
    const attempts = await this.deliveries.attemptsFor(page.items.map((d) => d.id));
    return new Paged(
      page.items.map((d) => toDeliveryResource(d, attempts.filter((a) => a.deliveryId === d.id))),
      page.page,
    );
  }

  /** Counts a test event or manual retry against the customer's own limit for them (sendsPerMinute). */
  private async consumeSend(caller: TrendhooksPrincipal): Promise<void> {
    const state = await this.limits.consume(`sends:tenant:${caller.tenantId}`, sendsPerMinute(this.plans.limits(caller.plan).requestsPerMinute));
    if (!state.allowed) {
      throw new AppError('RATE_LIMITED', `at most ${state.limit} test events and manual retries per minute; retry in ${state.resetSeconds} s`, { 'Retry-After': String(state.resetSeconds) });
    }
  }


  /** Re-queues a delivery now, under the same id (receivers deduplicate on it). */
  async retry(caller: TrendhooksPrincipal, rawWebhookId: string, rawDeliveryId: string): Promise<DeliveryResource> {
    const w = await this.ownedWebhook(caller, rawWebhookId);
    refuseDisabled(w);
    await this.consumeSend(caller);
    const id = rawDeliveryId.toLowerCase();
    if (!DELIVERY_ID_RE.test(id)) throw new AppError('VALIDATION_ERROR', 'delivery_id must be msg_ followed by 26 Crockford base32 characters (0-9 and a-z without i, l, o, u)');
    const d = await this.deliveries.findForWebhook(w.id, id);
    if (!d) throw new AppError('NOT_FOUND', `delivery ${rawDeliveryId} not found`);
    if (d.state === 'delivering') throw new AppError('CONFLICT', `delivery ${id} is being attempted right now`);
    if (!(await this.deliveries.requeue(id, this.clock.now()))) throw new AppError('CONFLICT', `delivery ${id} is being attempted right now`);
    this.waker.wake();
    const fresh = (await this.deliveries.findForWebhook(w.id, id))!;
    return toDeliveryResource(fresh, await this.deliveries.attemptsFor([id]));
  }

  /** Sends a test event of the webhook's own kind (its example figures, `data.test: true`) to this webhook only. */
  async sendTest(caller: TrendhooksPrincipal, rawWebhookId: string): Promise<{ event_id: string; delivery_id: string }> {
    const w = await this.ownedWebhook(caller, rawWebhookId);
    refuseDisabled(w);
    await this.consumeSend(caller);
    const res = await this.events.emitTest({ id: w.id, customerId: w.customerId, event: w.event, subreddit: w.subreddit });
    return { event_id: res.event_id, delivery_id: deliveryId(res.event_id, w.id) };
  }
}
