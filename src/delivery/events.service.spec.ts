import type { Clock } from '../common/clock';
import type { Metrics } from '../metrics/metrics.service';
import { exampleFigures } from '../events/catalogue';
import { deliveryId } from './delivery-id';
import { EventsService } from './events.service';
import { fakeQueueAndWaker } from './queue/in-memory-delivery-queue.fake';
import { RoutedEvent, SubscriptionSource, WebhookTableSubscriptions } from './subscription-source';

const NOW = new Date('2026-11-23T12:00:00Z');

function setup() {
  const { queue, waker, wakes } = fakeQueueAndWaker();
  const emitted: string[] = [];
  const metrics = { eventEmitted: (type: string) => emitted.push(type) } as unknown as Metrics;
  const clock: Clock = { now: () => NOW };
  const events = new EventsService(queue, waker, clock, metrics);
  return { queue, events, emitted, wakes };
}

describe('EventsService', () => {
  it('fans a trend event out to its subscribers, under deterministic delivery ids, and wakes the workers', async () => {
    const { queue, events, emitted, wakes } = setup();
    queue.subscribers.set('trends.rising/typescript', [
      { id: 'wh1', customerId: 'c1' },
      { id: 'wh2', customerId: 'c2' },
    ]);
    const res = await events.emit({ id: 'evt_one', type: 'trends.rising', subreddit: 'r/TypeScript', data: { score: 3 } });
    expect(res).toEqual({ event_id: 'evt_one', created: true, deliveries: 2 });
    expect(queue.events.get('evt_one')).toMatchObject({ subreddit: 'typescript', payload: '{"score":3}', createdAt: NOW });
    expect(queue.deliveries.map((d) => d.id)).toEqual([deliveryId('evt_one', 'wh1'), deliveryId('evt_one', 'wh2')]);
    expect(emitted).toEqual(['trends.rising']);
    expect(wakes()).toBe(1);
  });

  it('treats a replayed event id as done: nothing created, counted or woken', async () => {
    const { queue, events, emitted, wakes } = setup();
    queue.subscribers.set('trends.surge/rust', [{ id: 'wh1', customerId: 'c1' }]);
    await events.emit({ id: 'evt_again', type: 'trends.surge', subreddit: 'rust' });
    const replay = await events.emit({ id: 'evt_again', type: 'trends.surge', subreddit: 'rust' });
    expect(replay).toEqual({ event_id: 'evt_again', created: false, deliveries: 0 });
    expect(queue.deliveries).toHaveLength(1);
    expect(emitted).toEqual(['trends.surge']);
    expect(wakes()).toBe(1);
  });

  it('records an event nobody subscribes to without waking the workers', async () => {
    const { events, emitted, wakes } = setup();
    const res = await events.emit({ type: 'trends.velocity', subreddit: 'quiet_sub' });
    expect(res).toMatchObject({ created: true, deliveries: 0 });
    expect(res.event_id).toMatch(/^evt_/);
    expect(emitted).toEqual(['trends.velocity']);
    expect(wakes()).toBe(0);
  });

  it("sends a test event of the webhook's own kind, with the kind's example figures, to that webhook only, under an evt_test_ id", async () => {
    const { queue, events, emitted } = setup();
    queue.subscribers.set('trends.velocity/golang', [{ id: 'other', customerId: 'c9' }]);
    const res = await events.emitTest({ id: 'wh1', customerId: 'c1', event: 'trends.velocity', subreddit: 'GoLang' });
    expect(res).toMatchObject({ created: true, deliveries: 1 });
    expect(res.event_id).toMatch(/^evt_test_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(queue.deliveries.map((d) => ({ id: d.id, webhookId: d.webhookId }))).toEqual([{ id: deliveryId(res.event_id, 'wh1'), webhookId: 'wh1' }]);
    expect(queue.events.get(res.event_id)).toMatchObject({ type: 'trends.velocity', subreddit: 'golang', createdAt: NOW });
    expect(JSON.parse(queue.events.get(res.event_id)!.payload)).toEqual(exampleFigures('trends.velocity'));
    // Counted apart from the kind's real events.
    expect(emitted).toEqual(['test']);
  });

  it("refuses a test of a host's endpoint, which subscribes to no kind, before writing anything", async () => {
    const { queue, events } = setup();
    await expect(Promise.resolve().then(() => events.emitTest({ id: 'ep1', customerId: 'c1', event: '' as 'trends.surge', subreddit: '' }))).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringContaining('no event kind'),
    });
    expect(queue.events.size).toBe(0);
  });

  it('gives every test event a new id, so a second test is sent again', async () => {
    const { events } = setup();
    const webhook = { id: 'wh1', customerId: 'c1', event: 'trends.surge' as const, subreddit: 'rust' };
    const [a, b] = [await events.emitTest(webhook), await events.emitTest(webhook)];
    expect(a.event_id).not.toBe(b.event_id);
    expect(b).toMatchObject({ created: true, deliveries: 1 });
  });

  it.each([
    ['an unknown kind', { type: 'trends.unknown', subreddit: 'rust' }, 'event'],
    ['a malformed subreddit', { type: 'trends.rising', subreddit: 'a b' }, 'subreddit must be'],
    ['an event id without evt_', { id: 'nope', type: 'trends.rising', subreddit: 'rust' }, 'event id must look like'],
    ["a test event's id (evt_test_…)", { id: 'evt_test_01KJSX4M8G0000000000000002', type: 'trends.rising', subreddit: 'rust' }, 'evt_test_'],
    ['data that is not an object', { type: 'trends.rising', subreddit: 'rust', data: [] as unknown as Record<string, unknown> }, 'data must be a JSON object'],
  ])('rejects %s before writing anything', async (_, input, message) => {
    const { queue, events, wakes } = setup();
    await expect(Promise.resolve().then(() => events.emit(input))).rejects.toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining(message) });
    expect(queue.events.size).toBe(0);
    expect(wakes()).toBe(0);
  });

  describe('with a SubscriptionSource', () => {
    const spyQueue = () => {
      const { queue, waker } = fakeQueueAndWaker();
      const targets: unknown[] = [];
      const insert = queue.insertEventWithDeliveries.bind(queue);
      queue.insertEventWithDeliveries = (e, t, idFor, now) => (targets.push(t), insert(e, t, idFor, now));
      return { queue, waker, targets };
    };

    it("keeps the built-in source's lookup inside the queue's insert (the fused statement), never asking the source", async () => {
      const { queue, waker, targets } = spyQueue();
      const builtIn = Object.create(WebhookTableSubscriptions.prototype) as WebhookTableSubscriptions;
      builtIn.subscribers = () => Promise.reject(new Error('the fused path must not call this'));
      queue.subscribers.set('trends.surge/rust', [{ id: 'wh1', customerId: 'c1' }]);
      const res = await new EventsService(queue, waker, { now: () => NOW }, undefined, builtIn).emit({ type: 'trends.surge', subreddit: 'rust' });
      expect(res.deliveries).toBe(1);
      expect(targets).toEqual(['subscribers']);
    });

    it("writes one delivery per endpoint a host's source answers, with the routed event it was asked about", async () => {
      const { queue, waker, targets } = spyQueue();
      const asked: RoutedEvent[] = [];
      class HostSource extends SubscriptionSource {
        async subscribers(e: RoutedEvent) {
          asked.push(e);
          return [{ id: 'ep1', customerId: 'u1' }, { id: 'ep2', customerId: 'u2' }];
        }
      }
      // The table's rows for this kind and subreddit are not the host's: they must not be used.
      queue.subscribers.set('trends.surge/rust', [{ id: 'wh1', customerId: 'c1' }]);
      const res = await new EventsService(queue, waker, { now: () => NOW }, undefined, new HostSource()).emit({ id: 'evt_h', type: 'trends.surge', subreddit: 'r/Rust', data: { n: 1 } });
      expect(res).toEqual({ event_id: 'evt_h', created: true, deliveries: 2 });
      expect(asked).toEqual([{ id: 'evt_h', type: 'trends.surge', subreddit: 'rust', data: { n: 1 }, createdAt: NOW }]);
      expect(targets).toEqual([[{ id: 'ep1', customerId: 'u1' }, { id: 'ep2', customerId: 'u2' }]]);
      expect(queue.deliveries.map((d) => d.webhookId)).toEqual(['ep1', 'ep2']);
    });
  });
});
