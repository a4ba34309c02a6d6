import type { TrendhooksPrincipal } from '../auth/principal';
import type { PlanService } from '../auth/plan.service';
import { RateLimitService } from '../auth/rate-limit.service';
import { MemoryRateLimitStore } from '../auth/rate-limit.store';
import { AppError } from '../common/errors';
import { newUlid } from '../common/ids';
import { deliveryId } from '../delivery/delivery-id';
import { fakeQueueAndWaker } from '../delivery/queue/in-memory-delivery-queue.fake';
import { newEndpointRow } from '../delivery/endpoint.entity';
import { RECOVER_CALLS_PER_MINUTE, RecoverBudget } from './recover-budget';
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
    // The real counters; the keys charged are recorded. A plan of 4 requests a minute allows one send.
    const store = new MemoryRateLimitStore();
    const counting = { hit: (key: string, windowMs: number, now: number) => (sends.push(key), store.hit(key, windowMs, now)) };
    const clock = { now: () => NOW };
    const limits = new RateLimitService(counting, clock);
    const plans = { limits: () => ({ requestsPerMinute: 4 }) } as unknown as PlanService;
    const budget = new RecoverBudget(limits);
    const service = new RecoverService(webhooks, queue, waker, plans, limits, budget, clock);
    // Two hours ago, an event of the subscription that no delivery ever reached.
    queue.events.set('evt_a', { id: 'evt_a', type: 'trends.surge', subreddit: 'rust', payload: '{}', createdAt: new Date(NOW.getTime() - 2 * HOUR) });
    return { service, queue, w, wakes, sends, budget };
  }

  const since = new Date(NOW.getTime() - 3 * HOUR).toISOString();

  it('queues the missed event under its deterministic id, wakes the workers once, and charges one send', async () => {
    const { service, queue, w, wakes, sends } = setup();
    expect(await service.recover(alice, w.id.toLowerCase(), { since })).toEqual({ queued: 1, since, until: NOW.toISOString(), dry_run: false, next_since: null });
    expect(queue.deliveries.map((d) => [d.id, d.state])).toEqual([[deliveryId('evt_a', w.id), 'pending']]);
    expect([wakes(), sends]).toEqual([1, ['recover:tenant:cus_alice', 'sends:tenant:cus_alice']]);
    // Nothing left to queue: no wake.
    expect((await service.recover(alice, w.id, { since, dry_run: true })).queued).toBe(0);
    expect(wakes()).toBe(1);
  });

  it('counts a dry run without queueing, waking or charging a send', async () => {
    const { service, queue, w, wakes, sends } = setup();
    expect(await service.recover(alice, w.id, { since, dry_run: true })).toMatchObject({ queued: 1, dry_run: true });
    expect([queue.deliveries.length, wakes(), sends]).toEqual([0, 0, ['recover:tenant:cus_alice']]);
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

  it("starts at the webhook's creation: an event before it is not read, and next_since never names one", async () => {
    const { service, queue, w } = setup();
    for (let i = 0; i < 3; i++) {
      queue.events.set(`evt_old${i}`, { id: `evt_old${i}`, type: 'trends.surge', subreddit: 'rust', payload: '{}', createdAt: new Date(w.createdAt.getTime() - (i + 1) * HOUR) });
    }
    const walked = jest.spyOn(queue, 'recover');
    const res = await service.recover(alice, w.id, { since: new Date(NOW.getTime() - 10 * HOUR).toISOString(), dry_run: true });
    expect(res).toMatchObject({ queued: 1, next_since: null });
    expect(await walked.mock.results[0].value).toMatchObject({ read: 1 });
  });

  it('runs one recover of a customer at a time: a second, dry or not, is RATE_LIMITED while the first walks; another customer is not held', async () => {
    const { service, queue, w, budget } = setup();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const walk = queue.recover.bind(queue);
    jest.spyOn(queue, 'recover').mockImplementationOnce(async (...args) => (await gate, walk(...args)));
    const first = service.recover(alice, w.id, { since, dry_run: true });
    await new Promise((r) => setImmediate(r));
    const second = await service.recover(alice, w.id, { since, dry_run: true }).catch((e: AppError) => e);
    expect(second).toMatchObject({ code: 'RATE_LIMITED', headers: { 'Retry-After': '1' } });
    expect(await budget.run(bob, async () => 'bob walks')).toBe('bob walks');
    release();
    expect((await first).queued).toBe(1);
    expect((await service.recover(alice, w.id, { since, dry_run: true })).queued).toBe(1);
  });

  it(`answers RATE_LIMITED with Retry-After past ${RECOVER_CALLS_PER_MINUTE} recovers a minute, dry runs included`, async () => {
    const { service, w } = setup();
    for (let i = 0; i < RECOVER_CALLS_PER_MINUTE; i++) await service.recover(alice, w.id, { since, dry_run: true });
    const refused = await service.recover(alice, w.id, { since, dry_run: true }).catch((e: AppError) => e);
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining(`${RECOVER_CALLS_PER_MINUTE} recovers per minute`) });
    expect(Number((refused as AppError).headers?.['Retry-After'])).toBeGreaterThan(0);
  });
});
