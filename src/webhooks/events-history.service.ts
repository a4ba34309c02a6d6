import { Injectable } from '@nestjs/common';
import { TrendhooksPrincipal } from '../auth/principal';
import { PlanService } from '../auth/plan.service';
import { Paged } from '../common/envelope';
import { isEventKind } from '../events/catalogue';
import { DeliveryQueue } from '../delivery/queue/delivery-queue';
import type { EventSubscription } from '../delivery/queue/types';
import { ListQuery, PaginationService } from '../pagination/pagination.service';
import { EventResource, toEventResource } from './dto/event.resource';
import { eventsFilterParams, EventsFilter, EventsFilterQuery, parseEventsFilter } from './events-filter';
import { CustomerSubscription, WebhookStore } from './webhook.store';

export const EVENTS_LIST_ROUTE = 'events.list';

/**
 * What of a customer's subscriptions the history reads: trend kinds only (never a host
 * endpoint's), narrowed by the filter, each from its oldest webhook's creation on. Test events,
 * which share their webhook's kind, are left out by the queue's read (their `evt_test_` id).
 */
export function historySubscriptions(subs: readonly CustomerSubscription[], filter: EventsFilter): EventSubscription[] {
  return subs
    .filter((s) => isEventKind(s.event) && (filter.event === undefined || s.event === filter.event) && (filter.subreddit === undefined || s.subreddit === filter.subreddit))
    .map((s) => ({ type: s.event, subreddit: s.subreddit, from: s.since }));
}

/**
 * The events history (`GET /v1/events`): a pull fallback for a receiver that was down. It shows
 * the events of the caller's own subscriptions only, from when the caller subscribed: a filter
 * naming anything else finds nothing.
 */
@Injectable()
export class EventsHistoryService {
  constructor(
    private readonly webhooks: WebhookStore,
    private readonly queue: DeliveryQueue,
    private readonly plans: PlanService,
    private readonly pagination: PaginationService,
  ) {}

  async list(caller: TrendhooksPrincipal, query: ListQuery & EventsFilterQuery): Promise<Paged<EventResource>> {
    const filter = parseEventsFilter(query);
    const ctx = await this.pagination.begin(query, {
      route: EVENTS_LIST_ROUTE,
      customerId: caller.tenantId,
      params: eventsFilterParams(filter),
      planMaxPageSize: this.plans.limits(caller.plan).maxPageSize,
    });
    const subs = historySubscriptions(await this.webhooks.subscriptionsOf(caller.tenantId), filter);
    const rows = subs.length === 0 ? [] : await this.queue.eventsPage(subs, ctx.request, filter.since);
    const page = ctx.withPrev(rows, (e) => [e.createdAt.getTime(), e.id]);
    return new Paged(page.items.map(toEventResource), page.page);
  }
}
