import type { TrendhooksPrincipal } from '../auth/principal';
import type { PlanService } from '../auth/plan.service';
import type { RateLimitService } from '../auth/rate-limit.service';
import { AppError } from '../common/errors';
import { newUlid } from '../common/ids';
import { deliveryId } from '../delivery/delivery-id';
import { fakeQueueAndWaker } from '../delivery/queue/in-memory-delivery-queue.fake';
import { newEndpointRow } from '../delivery/endpoint.entity';
import { RecoverService } from './recover.service';
import type { Webhook, WebhookStore } from './webhook.store';

const NOW = new Date('2026-11-28T10:00:00.000Z');
const HOUR = 3_600_000;

describe('RecoverService', () => {
  const alice: TrendhooksPrincipal = { tenantId: 'cus_alice', plan: 'business' };
  const bob: TrendhooksPrincipal = { tenantId: 'cus_bob', plan: 'business' };

  function setup(event = 'trends.surge') {
    const { queue, waker, wakes } = fakeQueueAndWaker();
    const w: Webhook = {
      ...newEndpointRow({
        id: newUlid(NOW.getTime() - 5 * HOUR),
        customerId: alice.tenantId,
        url: 'https://hooks.example.com/in',
        allowNonstandardPort: false,
        secret: 'enc:x',
        createdAt: new Date(NOW.getTime() - 5 * HOUR),
      }),
      event: event as Webhook['event'],
      subreddit: 'rust',
    };
    const webhooks = { findForCustomer: async (customerId: string, id: string) => (customerId === w.customerId && id === w.id ? { ...w } : null) } as unknown as WebhookStore;
    const sends: string[] = [];
    const limits = { consume: async (key: string) => (sends.push(key), { allowed: sends.length <= 1, limit: 1, remaining: 0, resetSeconds: 7 }) } as unknown as RateLimitService;
    const plans = { limits: () => ({ requestsPerMinute: 1200 }) } as unknown as PlanService;
    const service = new RecoverService(webhooks, queue, waker, plans, limits, { now: () => NOW });
    // Two hours ago, an event of the subscription that no delivery ever reached.
    queue.events.set('evt_a', { id: 'evt_a', type: 'trends.surge', subreddit: 'rust', payload: '{}', createdAt: new Date(NOW.getTime() - 2 * HOUR) });
    return { service, queue, w, wakes, sends };
  }

  const since = new Date(NOW.getTime() - 3 * HOUR).toISOString();

  it('queues the missed event under its deterministic id, wakes the workers once, and charges one send', async () => {
    const { service, queue, w, wakes, sends } = setup();
    expect(await service.recover(alice, w.id.toLowerCase(), { since })).toEqual({ queued: 1, since, until: NOW.toISOString(), dry_run: false, next_since: null });
    expect(queue.deliveries.map((d) => [d.id, d.state])).toEqual([[deliveryId('evt_a', w.id), 'pending']]);
    expect([wakes(), sends]).toEqual([1, ['sends:tenant:cus_alice']]);
    // Nothing left to queue: no wake.
    expect((await service.recover(alice, w.id, { since, dry_run: true })).queued).toBe(0);
    expect(wakes()).toBe(1);
  });

  it('counts a dry run without queueing, waking or charging a send', async () => {
    const { service, queue, w, wakes, sends } = setup();
    expect(await service.recover(alice, w.id, { since, dry_run: true })).toMatchObject({ queued: 1, dry_run: true });
    expect([queue.deliveries.length, wakes(), sends.length]).toEqual([0, 0, 0]);
  });

  it("answers NOT_FOUND for another customer's webhook before reading the window, and RATE_LIMITED past the send limit", async () => {
    const { service, w } = setup();
    await expect(service.recover(bob, w.id, { since: 'nonsense' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(service.recover(alice, 'nope', { since })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await service.recover(alice, w.id, { since });
    const limited = await service.recover(alice, w.id, { since }).catch((e: AppError) => e);
    expect(limited).toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('queues nothing for an endpoint that subscribes to no trend kind', async () => {
    const { service, queue, w } = setup('');
    expect((await service.recover(alice, w.id, { since })).queued).toBe(0);
    expect(queue.deliveries).toEqual([]);
  });
});
