import type { Clock } from '../common/clock';
import type { Metrics } from '../metrics/metrics.service';
import { exampleFigures } from '../events/catalogue';
import { deliveryId } from './delivery-id';
import { EventsService } from './events.service';
import { fakeQueueAndWaker } from './queue/in-memory-delivery-queue.fake';
import type { Subscriber } from './queue/types';
import { BuiltInSubscriptions, RoutedEvent, SubscriptionSource, SubscriptionTable } from './subscription-source';

const NOW = new Date('2026-11-23T12:00:00Z');

/** Subscriptions by `${kind}/${subreddit}`, as the webhook API's table would answer them. */
class MapSource extends SubscriptionSource {
  readonly subscribed = new Map<string, Subscriber[]>();
  async subscribers(e: RoutedEvent): Promise<Subscriber[]> {
    return this.subscribed.get(`${e.type}/${e.subreddit}`) ?? [];
  }
}

function setup() {
  const { queue, waker, wakes } = fakeQueueAndWaker();
  const emitted: string[] = [];
  const metrics = { eventEmitted: (type: string) => emitted.push(type) } as unknown as Metrics;
  const clock: Clock = { now: () => NOW };
  const source = new MapSource();
  const events = new EventsService(queue, waker, clock, metrics, source);
  return { queue, events, emitted, wakes, subscribers: source.subscribed };
}

describe('EventsService', () => {
  it('fans a trend event out to its subscribers, under deterministic delivery ids, and wakes the workers', async () => {
    const { queue, events, emitted, wakes, subscribers } = setup();
    subscribers.set('trends.rising/typescript', [
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
    const { queue, events, emitted, wakes, subscribers } = setup();
    subscribers.set('trends.surge/rust', [{ id: 'wh1', customerId: 'c1' }]);
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
    const { queue, events, emitted, subscribers } = setup();
    subscribers.set('trends.velocity/golang', [{ id: 'other', customerId: 'c9' }]);
    const res = await events.emitTest({ id: 'wh1', customerId: 'c1', event: 'trends.velocity', subreddit: 'GoLang' });
    expect(res).toMatchObject({ created: true, deliveries: 1 });
    expect(res.event_id).toMatch(/^evt_test_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(queue.deliveries.map((d) => ({ id: d.id, webhookId: d.webhookId }))).toEqual([{ id: deliveryId(res.event_id, 'wh1'), webhookId: 'wh1' }]);
    expect(queue.events.get(res.event_id)).toMatchObject({ type: 'trends.velocity', subreddit: 'golang', createdAt: NOW });
    expect(JSON.parse(queue.events.get(res.event_id)!.payload)).toEqual(exampleFigures('trends.velocity'));
    // Counted apart from the kind's real events.
    expect(emitted).toEqual(['test']);
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

    it('routes through the webhook API\'s table once it is attached to the built-in source, and to no one before', async () => {
      const { queue, waker, targets } = spyQueue();
      const builtIn = new BuiltInSubscriptions();
      const events = new EventsService(queue, waker, { now: () => NOW }, undefined, builtIn);
      expect((await events.emit({ type: 'trends.surge', subreddit: 'rust' })).deliveries).toBe(0);
      const table: SubscriptionTable = {
        subscribers: async (e) => (e.subreddit === 'rust' ? [{ id: 'wh1', customerId: 'c1' }] : []),
        subredditsWithWebhooks: async () => ['rust'],
        hasWebhook: async (s) => s === 'rust',
      };
      builtIn.attach(table);
      expect((await events.emit({ type: 'trends.surge', subreddit: 'rust' })).deliveries).toBe(1);
      expect(targets).toEqual([[], [{ id: 'wh1', customerId: 'c1' }]]);
      expect(await builtIn.subredditsWithWebhooks()).toEqual(['rust']);
      expect(() => builtIn.attach({ ...table } as SubscriptionTable)).toThrow(/attached already/);
    });

    it('asks the source nothing for a replayed id whose fan-out the queue knows is complete', async () => {
      const { queue, waker } = spyQueue();
      let asked = 0;
      class CountingSource extends SubscriptionSource {
        async subscribers() {
          asked++;
          return [{ id: 'ep1', customerId: 'u1' }];
        }
      }
      const events = new EventsService(queue, waker, { now: () => NOW }, undefined, new CountingSource());
      expect(await events.emit({ id: 'evt_r', type: 'trends.surge', subreddit: 'rust' })).toMatchObject({ created: true, deliveries: 1 });
      expect(await events.emit({ id: 'evt_r', type: 'trends.surge', subreddit: 'rust' })).toEqual({ event_id: 'evt_r', created: false, deliveries: 0 });
      expect(asked).toBe(1);
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
      const res = await new EventsService(queue, waker, { now: () => NOW }, undefined, new HostSource()).emit({ id: 'evt_h', type: 'trends.surge', subreddit: 'r/Rust', data: { n: 1 } });
      expect(res).toEqual({ event_id: 'evt_h', created: true, deliveries: 2 });
      expect(asked).toEqual([{ id: 'evt_h', type: 'trends.surge', subreddit: 'rust', data: { n: 1 }, createdAt: NOW }]);
      expect(targets).toEqual([[{ id: 'ep1', customerId: 'u1' }, { id: 'ep2', customerId: 'u2' }]]);
      expect(queue.deliveries.map((d) => d.webhookId)).toEqual(['ep1', 'ep2']);
    });
  });
});
