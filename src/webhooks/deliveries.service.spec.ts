import { randomBytes } from 'node:crypto';
import type { TrendhooksPrincipal } from '../auth/principal';
import { PlanService } from '../auth/plan.service';
import { DEFAULT_PLAN_LIMITS } from '../auth/plans';
import { RateLimitService } from '../auth/rate-limit.service';
import { MemoryRateLimitStore } from '../auth/rate-limit.store';
import type { Clock } from '../common/clock';
import { newUlid } from '../common/ids';
import { CursorKeyRing } from '../pagination/cursor-codec';
import type { CursorKeys } from '../pagination/cursor-keys';
import { PaginationService } from '../pagination/pagination.service';
import type { Webhook, WebhookStore } from './webhook.store';
import { DeliveriesService } from './deliveries.service';
import { deliveryId } from '../delivery/delivery-id';
import { EventsService } from '../delivery/events.service';
import { fakeQueueAndWaker, InMemoryDeliveryQueue } from '../delivery/queue/in-memory-delivery-queue.fake';

const NOW = new Date('2026-11-23T12:00:00Z');

function setup(businessPerMinute = 1200) {
  const { queue, waker, wakes } = fakeQueueAndWaker();
  const clock: Clock = { now: () => NOW };
  const owner: TrendhooksPrincipal = { tenantId: 'cus_a', plan: 'business' };
  const hook = { id: newUlid(), customerId: owner.tenantId, event: 'trends.surge', subreddit: 'rust' } as Webhook;
  const webhooks = { findForCustomer: async (customerId: string, id: string) => (customerId === hook.customerId && id === hook.id ? hook : null) } as unknown as WebhookStore;
  const ring = new CursorKeyRing([{ id: 'k1', secret: randomBytes(32) }]);
  const keys = { get: async () => ring } as unknown as CursorKeys;
  const service = new DeliveriesService(
    queue,
    webhooks,
    new EventsService(queue, waker, clock),
    waker,
    new PlanService({ plans: { ...DEFAULT_PLAN_LIMITS, business: { ...DEFAULT_PLAN_LIMITS.business, requestsPerMinute: businessPerMinute } } }),
    new RateLimitService(new MemoryRateLimitStore(), clock),
    new PaginationService(keys, clock, {}),
    clock,
  );
  return { queue, service, owner, hook, wakes };
}

/** A delivery of a fresh event to `webhookId`, in `state`, created `at`. */
async function delivery(queue: InMemoryDeliveryQueue, webhookId: string, state: 'pending' | 'delivering' | 'delivered' | 'failed', at: Date): Promise<string> {
  const eventId = `evt_${newUlid()}`;
  await queue.insertEventWithDeliveries({ id: eventId, type: 'trends.rising', subreddit: 'rust', payload: '{}', createdAt: at }, [{ id: webhookId, customerId: 'cus_a' }], (w) => deliveryId(eventId, w), at);
  const d = queue.deliveries[queue.deliveries.length - 1];
  d.state = state;
  return d.id;
}

describe('DeliveriesService', () => {
  it('lists a webhook’s deliveries newest first with their attempts, paging by cursor', async () => {
    const { queue, service, owner, hook } = setup();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await delivery(queue, hook.id, 'delivered', new Date(NOW.getTime() - (3 - i) * 1000)));
    queue.attempts.push({ id: newUlid(), deliveryId: ids[2], attemptNo: 1, startedAt: NOW, durationMs: 5, statusCode: 200, outcome: 'delivered', errorClass: null, responseExcerpt: 'ok' });
    const first = await service.list(owner, hook.id, { limit: '2' });
    expect(first.items.map((d) => d.id)).toEqual([ids[2], ids[1]]);
    expect(first.items[0].attempts).toEqual([expect.objectContaining({ attempt: 1, status_code: 200 })]);
    const next = await service.list(owner, hook.id, { limit: '2', cursor: first.page.next_cursor! });
    expect(next.items.map((d) => d.id)).toEqual([ids[0]]);
  });

  it('filters by state and a half-open range of creation times, and binds the cursor to the filters', async () => {
    const { queue, service, owner, hook } = setup();
    const at = (s: number) => new Date(NOW.getTime() - s * 1000);
    const failed = [await delivery(queue, hook.id, 'failed', at(40)), await delivery(queue, hook.id, 'failed', at(30)), await delivery(queue, hook.id, 'failed', at(20))];
    await delivery(queue, hook.id, 'delivered', at(25));
    const q = { state: 'failed', since: at(40).toISOString(), until: at(20).toISOString() };
    const first = await service.list(owner, hook.id, { ...q, limit: '1' });
    expect(first.items.map((d) => d.id)).toEqual([failed[1]]);
    const next = await service.list(owner, hook.id, { ...q, limit: '1', cursor: first.page.next_cursor! });
    expect(next.items.map((d) => d.id)).toEqual([failed[0]]);
    expect(next.page.next_cursor).toBeNull();
    await expect(service.list(owner, hook.id, { ...q, state: 'delivered', cursor: first.page.next_cursor! })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
    await expect(service.list(owner, hook.id, { cursor: first.page.next_cursor! })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
    // The same instant written another way is the same filter.
    const same = { ...q, since: at(40).toISOString().replace('Z', '+00:00') };
    expect((await service.list(owner, hook.id, { ...same, limit: '1', cursor: first.page.next_cursor! })).items.map((d) => d.id)).toEqual([failed[0]]);
    await expect(service.list(owner, hook.id, { state: 'lost' })).rejects.toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('state') });
  });

  it('answers NOT_FOUND for another customer’s webhook', async () => {
    const { service, hook } = setup();
    await expect(service.list({ tenantId: 'cus_b', plan: 'business' }, hook.id, {})).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('requeues a finished delivery now, under the same id, and wakes the workers', async () => {
    const { queue, service, owner, hook, wakes } = setup();
    const id = await delivery(queue, hook.id, 'failed', new Date(NOW.getTime() - 60_000));
    const res = await service.retry(owner, hook.id, id.toUpperCase().replace('MSG_', 'msg_'));
    expect(res).toMatchObject({ id, state: 'pending', next_attempt_at: NOW.toISOString() });
    expect(wakes()).toBe(1);
  });

  it('refuses to requeue a delivery being attempted, and one it does not know', async () => {
    const { queue, service, owner, hook, wakes } = setup();
    const busy = await delivery(queue, hook.id, 'delivering', NOW);
    await expect(service.retry(owner, hook.id, busy)).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(service.retry(owner, hook.id, deliveryId('evt_none', hook.id))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(service.retry(owner, hook.id, 'msg_nope')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(wakes()).toBe(0);
  });

  it("sends a test event of the webhook's kind and subreddit to the webhook, answering its delivery id", async () => {
    const { queue, service, owner, hook, wakes } = setup();
    const res = await service.sendTest(owner, hook.id);
    expect(res.delivery_id).toBe(deliveryId(res.event_id, hook.id));
    expect(queue.deliveries.map((d) => d.id)).toEqual([res.delivery_id]);
    expect(queue.events.get(res.event_id)).toMatchObject({ type: 'trends.surge', subreddit: 'rust' });
    expect(wakes()).toBe(1);
  });

  it('limits test events and manual retries together to a quarter of the plan’s requests per minute, per customer, with Retry-After', async () => {
    const { queue, service, owner, hook } = setup(12);
    const done = await delivery(queue, hook.id, 'delivered', NOW);
    await service.retry(owner, hook.id, done);
    await service.sendTest(owner, hook.id);
    await service.sendTest(owner, hook.id);
    const refused = await service.sendTest(owner, hook.id).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', headers: { 'Retry-After': '60' } });
    await expect(service.retry(owner, hook.id, done)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    expect(queue.deliveries).toHaveLength(3); // the retried one and two test events: nothing queued past the limit
  });
});
