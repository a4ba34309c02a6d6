import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { newUlid } from '../../src/common/ids';
import { deliveryId } from '../../src/delivery/delivery-id';
import { DeliveryQueue } from '../../src/delivery/queue/delivery-queue';
import { QueueWaker } from '../../src/delivery/queue/queue-waker';
import { WebhookDeliveryStatus } from '../../src/delivery/status/webhook-delivery-status';
import { testDatabases } from '../support/databases';
import { startTestApp, TestApp } from '../support/app';
import { deliveryQueueConformance, QueueHarness, queueWakerConformance } from './delivery-queue.conformance';

/**
 * The delivery queue, its waker and the webhooks' last_* owner, each database's implementation
 * against the same suite. An API-only app (no worker), so the suite owns every claim.
 */
describe.each(testDatabases())('delivery queue on %s', (name, makeDb) => {
  let t: TestApp;
  let ds: DataSource;
  const p = (n: number) => (name === 'postgres' ? `$${n}` : '?');

  beforeAll(async () => {
    t = await startTestApp(makeDb(), { role: 'api' });
    ds = t.app.get<DataSource>(getDataSourceToken());
  });
  afterAll(async () => {
    await t?.close();
  });

  const harness = (): QueueHarness => ({
    queue: t.app.get(DeliveryQueue),
    status: t.app.get(WebhookDeliveryStatus),
    async webhook(subreddit) {
      const c = await t.customer();
      const res = await t.http().post('/v1/webhooks').set(c.auth).send({ url: 'https://hooks.example.com/in', event: 'trends.rising', subreddit });
      expect(res.status).toBe(201);
      return { id: res.body.data.id as string, customerId: c.customerId };
    },
    async deleteWebhook(id) {
      await ds.query(`DELETE FROM webhooks WHERE id = ${p(1)}`, [id]);
    },
    async pause(id, at) {
      await ds.query(`UPDATE webhooks SET disabled_at = ${p(1)}, disabled_reason = 'manual' WHERE id = ${p(2)}`, [at.getTime(), id]);
    },
    async deleteEvent(id) {
      await ds.query(`DELETE FROM events WHERE id = ${p(1)}`, [id]);
    },
    async delivery(id) {
      const [r] = (await ds.query(`SELECT state, attempts, lease_owner, next_attempt_at FROM deliveries WHERE id = ${p(1)}`, [id])) as {
        state: string;
        attempts: number | string;
        lease_owner: string | null;
        next_attempt_at: number | string | null;
      }[];
      return { state: r.state, attempts: Number(r.attempts), leaseOwner: r.lease_owner, nextAttemptAt: r.next_attempt_at === null ? null : Number(r.next_attempt_at) };
    },
    async lastStatus(webhookId) {
      const [r] = (await ds.query(`SELECT last_delivery_at, last_status, last_response_code FROM webhooks WHERE id = ${p(1)}`, [webhookId])) as {
        last_delivery_at: number | string | null;
        last_status: string | null;
        last_response_code: number | null;
      }[];
      return { at: r.last_delivery_at === null ? null : Number(r.last_delivery_at), status: r.last_status, code: r.last_response_code };
    },
    async lifecycle(webhookId) {
      const [r] = (await ds.query(`SELECT failing_since, failure_periods, last_failure_period, disabled_at, disabled_reason FROM webhooks WHERE id = ${p(1)}`, [webhookId])) as {
        failing_since: number | string | null;
        failure_periods: number | string;
        last_failure_period: number | string | null;
        disabled_at: number | string | null;
        disabled_reason: string | null;
      }[];
      const n = (v: number | string | null) => (v === null ? null : Number(v));
      return { failingSince: n(r.failing_since), failurePeriods: Number(r.failure_periods), lastFailurePeriod: n(r.last_failure_period), disabledAt: n(r.disabled_at), disabledReason: r.disabled_reason };
    },
  });

  describe('DeliveryQueue', () => deliveryQueueConformance(harness));

  describe('QueueWaker', () => queueWakerConformance(() => t.app.get(QueueWaker)));

  if (name === 'postgres') {
    it('wakes a listening waker when another connection’s fan-out commits (NOTIFY)', async () => {
      const waker = t.app.get(QueueWaker);
      let heard!: () => void;
      const woken = new Promise<void>((r) => (heard = r));
      waker.onWake(() => heard());
      await waker.start();
      try {
        const queue = t.app.get(DeliveryQueue);
        const c = await t.customer();
        const w = await t.http().post('/v1/webhooks').set(c.auth).send({ url: 'https://hooks.example.com/in', event: 'trends.rising', subreddit: `n${newUlid().slice(-10).toLowerCase()}` });
        const event = { id: `evt_${newUlid()}`, type: 'trends.rising', subreddit: 'x', payload: '{}', createdAt: new Date() };
        await queue.insertEventWithDeliveries(event, [{ id: w.body.data.id, customerId: c.customerId }], (id) => deliveryId(event.id, id), new Date());
        await woken; // no local wake(): only the NOTIFY reaches it
      } finally {
        await waker.stop();
      }
    });

    it('knows an event written with its deliveries is complete (one statement wrote both)', async () => {
      const queue = t.app.get(DeliveryQueue);
      const c = await t.customer();
      const w = await t.http().post('/v1/webhooks').set(c.auth).send({ url: 'https://hooks.example.com/in', event: 'trends.rising', subreddit: `c${newUlid().slice(-10).toLowerCase()}` });
      const event = { id: `evt_${newUlid()}`, type: 'trends.rising', subreddit: 'x', payload: '{}', createdAt: new Date() };
      await queue.insertEventWithDeliveries(event, [{ id: w.body.data.id, customerId: c.customerId }], (id) => deliveryId(event.id, id), new Date());
      expect(await queue.replayIsComplete(event.id)).toBe(true);
    });

    it('leases an emit’s deliveries to the emitting worker in the same statement (PostgreSQL does; the conformance suite allows a queue not to)', async () => {
      const queue = t.app.get(DeliveryQueue);
      const c = await t.customer();
      const subreddit = `l${newUlid().slice(-10).toLowerCase()}`;
      const ws: { id: string; customerId: string }[] = [];
      for (let i = 0; i < 3; i++) ws.push({ id: (await t.http().post('/v1/webhooks').set(c.auth).send({ url: 'https://hooks.example.com/in', event: 'trends.rising', subreddit }).expect(201)).body.data.id, customerId: c.customerId });
      const event = { id: `evt_${newUlid()}`, type: 'trends.rising', subreddit, payload: '{}', createdAt: new Date() };
      const now = new Date();
      const res = await queue.insertEventWithDeliveries(event, ws, (id) => deliveryId(event.id, id), now, { owner: 'me', now, leaseUntil: new Date(now.getTime() + 60_000), limit: 2 });
      expect(res.deliveries).toBe(3);
      expect(res.claimed).toHaveLength(2);
      const rows = (await ds.query('SELECT state, count(*)::int AS n FROM deliveries WHERE event_id = $1 GROUP BY state ORDER BY state', [event.id])) as { state: string; n: number }[];
      expect(rows).toEqual([
        { state: 'delivering', n: 2 },
        { state: 'pending', n: 1 },
      ]);
    });
  }
});
